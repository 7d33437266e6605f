/**
 * GET /v1/domain/{domain}/dmarc and /tls-reports through the gateway (docs/api/domains.md): the
 * summaries summed by the database from stored reports (written as the MX intake stores them,
 * support/report-rows.ts), the date range (default, bare dates, instants, the overlap rule), bad
 * dates, the tenant's own domain only, a read-scoped key, and zeros when nothing was reported.
 * Both modes: PGlite and the real PostgreSQL.
 */
import {
  DmarcSummaryResponseSchema,
  DomainErrorText,
  ErrorText,
  TlsReportsResponseSchema,
} from '@mailyard/contracts';
import { MODES } from '@mailyard/testkit/modes';
import { useGateway } from './support/harness';
import { insertDmarcReport, insertTlsReport } from './support/report-rows';

const DAY = 86_400_000;
const midnight = Math.floor(Date.now() / DAY) * DAY;
/** `n` days before today (UTC), at `time`. */
const daysAgo = (n: number, time = '00:00:00') =>
  `${new Date(midnight - n * DAY).toISOString().slice(0, 10)}T${time}Z`;
const dateAgo = (n: number) => daysAgo(n).slice(0, 10);

for (const mode of MODES) {
  describe(`domain report summaries (${mode})`, () => {
    const gw = useGateway(mode, { SERVICE_DOMAIN: 'mailyard.test' });
    const ids: Record<string, string> = {};

    const addDomain = async (domain: string, key = gw.key) => {
      const res = await gw.post('/v1/domain/add', { domain }, key);
      expect(res.status).toBe(201);
      return res.body.data.mailer_id as string;
    };
    const dmarc = (domain: string, query = '', key = gw.key) =>
      gw.get(`/v1/domain/${domain}/dmarc${query}`, key);
    const tls = (domain: string, query = '', key = gw.key) =>
      gw.get(`/v1/domain/${domain}/tls-reports${query}`, key);

    beforeAll(async () => {
      ids.own = await addDomain('reports.example.com');
      ids.sibling = await addDomain('other.example.com');
      ids.empty = await addDomain('quiet.example.com');
      // The other tenant has a domain of the same name, with its own report.
      ids.theirs = await addDomain('reports.example.com', gw.otherKey);
      const db = gw.ctx.db;
      const own = { tenantId: gw.tenantId, domainId: ids.own };
      await insertDmarcReport(db, {
        ...own,
        orgName: 'google.com',
        begin: daysAgo(1),
        end: daysAgo(1, '23:59:59'),
        rows: [
          { source_ip: '192.0.2.1', count: 10, dkim: 'pass', spf: 'pass' },
          { source_ip: '192.0.2.2', count: 5, dkim: 'fail', spf: 'pass' },
          { source_ip: '198.51.100.9', count: 3, dkim: 'fail', spf: 'fail', disposition: 'reject' },
          { source_ip: '192.0.2.1', count: 2, dkim: 'pass', spf: 'fail' },
        ],
      });
      await insertDmarcReport(db, {
        ...own,
        orgName: 'yahoo.com',
        begin: daysAgo(1),
        end: daysAgo(0),
        rows: [
          { source_ip: '192.0.2.1', count: 4, dkim: 'pass', spf: 'pass' },
          { source_ip: '198.51.100.9', count: 1, dkim: 'fail', spf: 'fail', disposition: 'reject' },
        ],
      });
      // Same reporter and source as the first report's largest row: summed into one source.
      await insertDmarcReport(db, {
        ...own,
        orgName: 'google.com',
        begin: daysAgo(2),
        end: daysAgo(2, '23:59:59'),
        rows: [{ source_ip: '192.0.2.1', count: 7, dkim: 'pass', spf: 'pass' }],
      });
      // Outside the default 30 days.
      await insertDmarcReport(db, {
        ...own,
        orgName: 'google.com',
        begin: daysAgo(40),
        end: daysAgo(40, '23:59:59'),
        rows: [{ source_ip: '203.0.113.5', count: 100, dkim: 'fail', spf: 'fail' }],
      });
      // Fixed days for the overlap rule: one report from noon to noon, one ending at a midnight.
      await insertDmarcReport(db, {
        ...own,
        orgName: 'outlook.com',
        begin: '2025-03-01T12:00:00Z',
        end: '2025-03-02T12:00:00Z',
        rows: [{ source_ip: '192.0.2.7', count: 6, dkim: 'pass', spf: 'pass' }],
      });
      await insertDmarcReport(db, {
        ...own,
        orgName: 'outlook.com',
        begin: '2025-03-02T00:00:00Z',
        end: '2025-03-03T00:00:00Z',
        rows: [{ source_ip: '192.0.2.8', count: 8, dkim: 'pass', spf: 'fail' }],
      });
      // The tenant's other domain and the other tenant's same-named domain: never in this summary.
      await insertDmarcReport(db, {
        tenantId: gw.tenantId,
        domainId: ids.sibling,
        orgName: 'google.com',
        begin: daysAgo(1),
        end: daysAgo(1, '23:59:59'),
        rows: [{ source_ip: '192.0.2.1', count: 1000, dkim: 'pass', spf: 'pass' }],
      });
      await insertDmarcReport(db, {
        tenantId: gw.otherTenantId,
        domainId: ids.theirs,
        orgName: 'google.com',
        begin: daysAgo(1),
        end: daysAgo(1, '23:59:59'),
        rows: [{ source_ip: '192.0.2.99', count: 9, dkim: 'fail', spf: 'fail' }],
      });

      await insertTlsReport(db, {
        ...own,
        orgName: 'google.com',
        start: daysAgo(1),
        end: daysAgo(1, '23:59:59'),
        policies: [
          {
            successful: 100,
            failed: 5,
            failureDetails: [
              { result_type: 'certificate-expired', failed_session_count: 3, sending_mta_ip: '192.0.2.1' },
              { result_type: 'starttls-not-supported', failed_session_count: 2 },
            ],
          },
          {
            successful: 50,
            failed: 1,
            failureDetails: [{ result_type: 'certificate-expired', failed_session_count: 1 }],
          },
        ],
      });
      await insertTlsReport(db, {
        ...own,
        orgName: 'microsoft.com',
        start: daysAgo(1, '06:00:00'),
        end: daysAgo(0, '06:00:00'),
        policies: [{ successful: 20, failed: 0 }],
      });
      // Today: odd failure-details entries are skipped, an odd result type (`__proto__`) is `other`.
      await insertTlsReport(db, {
        ...own,
        orgName: 'google.com',
        start: daysAgo(0),
        end: daysAgo(0, '23:59:59'),
        policies: [
          {
            successful: 7,
            failed: 3,
            failureDetails: [
              { result_type: 'validation-failure', failed_session_count: 2 },
              { result_type: '__proto__', failed_session_count: 1 },
              { result_type: 'sts-policy-invalid', failed_session_count: 'lots' },
              { failed_session_count: 5 },
              { result_type: 'dane-required', failed_session_count: -4 },
              'junk',
            ],
          },
        ],
      });
      await insertTlsReport(db, {
        ...own,
        orgName: 'google.com',
        start: daysAgo(40),
        end: daysAgo(40, '23:59:59'),
        policies: [{ successful: 1, failed: 1, failureDetails: { not: 'an array' } }],
      });
      await insertTlsReport(db, {
        tenantId: gw.otherTenantId,
        domainId: ids.theirs,
        orgName: 'google.com',
        start: daysAgo(1),
        end: daysAgo(1, '23:59:59'),
        policies: [{ successful: 999, failed: 999 }],
      });
    });

    describe('DMARC', () => {
      it('sums the reports of the last 30 days: messages, aligned passes, sources by count', async () => {
        const res = await dmarc('reports.example.com');
        expect(res.status).toBe(200);
        expect(DmarcSummaryResponseSchema.parse(res.body)).toEqual(res.body);
        const source = (
          ip: string,
          count: number,
          dkim: string,
          spf: string,
          reporter: string,
          disp = 'none',
        ) => ({
          source_ip: ip,
          count,
          disposition: disp,
          dkim,
          spf,
          header_from: 'example.com',
          reporter,
        });
        expect(res.body).toEqual({
          success: true,
          data: {
            reports: 3,
            messages: 32,
            dmarc_pass: 28,
            dkim_aligned_pass: 23,
            spf_aligned_pass: 26,
            sources: [
              source('192.0.2.1', 17, 'pass', 'pass', 'google.com'),
              source('192.0.2.2', 5, 'fail', 'pass', 'google.com'),
              source('192.0.2.1', 4, 'pass', 'pass', 'yahoo.com'),
              source('198.51.100.9', 3, 'fail', 'fail', 'google.com', 'reject'),
              source('192.0.2.1', 2, 'pass', 'fail', 'google.com'),
              source('198.51.100.9', 1, 'fail', 'fail', 'yahoo.com', 'reject'),
            ],
          },
        });
      });

      it('takes a bare date as its whole UTC day, and an older range', async () => {
        const day = dateAgo(40);
        const res = await dmarc('reports.example.com', `?startDate=${day}&endDate=${day}`);
        expect(res.body.data).toMatchObject({ reports: 1, messages: 100, dmarc_pass: 0 });
        expect(res.body.data.sources).toEqual([
          expect.objectContaining({ source_ip: '203.0.113.5', count: 100 }),
        ]);
        const yesterday = await dmarc(
          'reports.example.com',
          `?startDate=${dateAgo(1)}&endDate=${dateAgo(1)}`,
        );
        expect(yesterday.body.data).toMatchObject({ reports: 2, messages: 25 });
        // Only a start: through today.
        const since = await dmarc('reports.example.com', `?startDate=${dateAgo(45)}`);
        expect(since.body.data).toMatchObject({ reports: 4, messages: 132 });
      });

      it('counts a report whose period overlaps the range; one ending at its first instant does not', async () => {
        const day = async (query: string) => (await dmarc('reports.example.com', query)).body.data;
        expect(await day('?startDate=2025-03-01&endDate=2025-03-01')).toMatchObject({
          reports: 1,
          messages: 6,
        });
        expect(await day('?startDate=2025-03-02&endDate=2025-03-02')).toMatchObject({
          reports: 2,
          messages: 14,
        });
        expect(await day('?startDate=2025-03-03&endDate=2025-03-03')).toEqual({
          reports: 0,
          messages: 0,
          dmarc_pass: 0,
          dkim_aligned_pass: 0,
          spf_aligned_pass: 0,
          sources: [],
        });
        expect(await day('?startDate=2025-02-01&endDate=2025-03-31')).toMatchObject({
          reports: 2,
          messages: 14,
          spf_aligned_pass: 6,
        });
        // Instants: the noon-to-noon report ends exactly at the start and is left out.
        expect(await day('?startDate=2025-03-02T12:00:00Z&endDate=2025-03-02T12:00:00Z')).toMatchObject({
          reports: 1,
          messages: 8,
        });
      });

      it('answers zeros for a domain without reports', async () => {
        const res = await dmarc('quiet.example.com');
        expect(res.body).toEqual({
          success: true,
          data: {
            reports: 0,
            messages: 0,
            dmarc_pass: 0,
            dkim_aligned_pass: 0,
            spf_aligned_pass: 0,
            sources: [],
          },
        });
      });
    });

    describe('TLS reports', () => {
      it('lists every day of the last 30 days with sessions and failure types', async () => {
        const res = await tls('reports.example.com');
        expect(res.status).toBe(200);
        expect(TlsReportsResponseSchema.parse(res.body)).toEqual(res.body);
        const { reports, days } = res.body.data;
        expect(reports).toBe(3);
        expect(days).toHaveLength(30);
        expect(days[0].date).toBe(dateAgo(29));
        expect(days[29].date).toBe(dateAgo(0));
        expect(days[28]).toEqual({
          date: dateAgo(1),
          reports: 2,
          successful: 170,
          failed: 6,
          failure_types: { 'certificate-expired': 4, 'starttls-not-supported': 2 },
        });
        expect(days[29]).toMatchObject({ date: dateAgo(0), reports: 1, successful: 7, failed: 3 });
        expect(days[29].failure_types).toEqual({ 'validation-failure': 2, other: 1 });
        for (const d of days.slice(0, 28))
          expect(d).toEqual({ date: d.date, reports: 0, successful: 0, failed: 0, failure_types: {} });
      });

      it('takes bare dates and instants as whole UTC days', async () => {
        const day = dateAgo(40);
        const res = await tls('reports.example.com', `?startDate=${day}&endDate=${day}`);
        expect(res.body.data).toEqual({
          reports: 1,
          days: [{ date: day, reports: 1, successful: 1, failed: 1, failure_types: {} }],
        });
        const instants = await tls(
          'reports.example.com',
          `?startDate=${daysAgo(1, '12:00:00')}&endDate=${daysAgo(0, '01:00:00')}`,
        );
        expect(instants.body.data.days.map((d: { date: string }) => d.date)).toEqual([
          dateAgo(1),
          dateAgo(0),
        ]);
        expect(instants.body.data.reports).toBe(3);
      });

      it('answers every day with zeros for a domain without reports', async () => {
        const res = await tls('quiet.example.com');
        expect(res.body.data.reports).toBe(0);
        expect(res.body.data.days).toHaveLength(30);
        expect(
          res.body.data.days.every(
            (d: { successful: number; failed: number }) => d.successful + d.failed === 0,
          ),
        ).toBe(true);
      });
    });

    describe.each([
      ['dmarc', dmarc],
      ['tls-reports', tls],
    ] as const)('%s: refusals and access', (_name, read) => {
      it('answers 400 with the envelope for bad dates and ranges', async () => {
        const bad = async (query: string, error: string) => {
          const res = await read('reports.example.com', query);
          expect({ query, status: res.status, body: res.body }).toEqual({
            query,
            status: 400,
            body: { success: false, error },
          });
        };
        await bad('?startDate=2026-02-30', 'startDate must be an RFC 3339 date-time or a YYYY-MM-DD date');
        await bad('?endDate=last-week', 'endDate must be an RFC 3339 date-time or a YYYY-MM-DD date');
        await bad('?startDate=2026-03-02&endDate=2026-03-01', 'startDate must not be after endDate');
        await bad(
          '?startDate=2024-01-01&endDate=2025-01-01',
          'The date range covers too many days: at most 366',
        );
        await bad('?startDate=a&startDate=b', 'startDate must be a string');
      });

      it("answers 404 for an unknown domain and for another tenant's domain", async () => {
        const notFound = { success: false, error: DomainErrorText.domainNotFound };
        expect((await read('unknown.example.com')).body).toEqual(notFound);
        expect((await read('unknown.example.com')).status).toBe(404);
        expect((await read('other.example.com', '', gw.otherKey)).status).toBe(404);
        expect((await read('other.example.com', '', gw.otherKey)).body).toEqual(notFound);
        expect((await read('not a domain')).body).toEqual({
          success: false,
          error: DomainErrorText.invalidDomain,
        });
      });

      it("the other tenant's same-named domain shows only its own reports", async () => {
        const res = await read('reports.example.com', '', gw.otherKey);
        expect(res.status).toBe(200);
        expect(res.body.data.reports).toBe(1);
        expect(JSON.stringify(res.body)).not.toMatch(/192\.0\.2\.1"|170/);
      });

      it('a read-scoped key reads the summary; a send-scoped key may not', async () => {
        const key = async (scope: string) => {
          const res = await gw.post('/v1/keys', { name: `${scope} reports`, scope });
          expect(res.status).toBe(201);
          return res.body.api_key as string;
        };
        const ok = await read('reports.example.com', '', await key('read'));
        expect(ok.status).toBe(200);
        expect(ok.body.data.reports).toBe(3);
        const refused = await read('reports.example.com', '', await key('send'));
        expect(refused.status).toBe(403);
        expect(refused.body).toEqual({ success: false, error: ErrorText.scopeReadData });
      });
    });
  });
}
