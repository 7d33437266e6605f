/**
 * DMARC aggregate and TLS-RPT reports through the real MX (docs/deliverability.md): mailed over
 * SMTP with swaks to `dmarc@` / `tls-rpt@` on the bounce domain and on SERVICE_DOMAIN, as
 * the mailbox providers pack them (Google: one gzip XML; a zip holding Microsoft's and Yahoo's;
 * TLS-RPT as `application/tlsrpt+gzip` and as plain JSON), then read back from PostgreSQL:
 * stored for the tenants' VERIFIED domains (the exact name, else the closest verified parent),
 * never for an unverified or deleted claim to the same domain; mailed twice or processed twice
 * (the recovery path taking the message again), a report is stored once. A gzip bomb and a
 * report for nobody's domain are accepted at SMTP, refused, counted, stored nowhere; any other
 * address on those domains is 550.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { metricsRegistry } from '@mailyard/platform';
import { eventually } from '@mailyard/testkit/eventually';
import { dkimKeyPair, insertDomainMailer, newTenant } from '@mailyard/testkit/fixtures';
import { buildZip } from '@mailyard/testkit/zip';
import { type InboundHarness, startInbound } from './support/inbound';

jest.setTimeout(120_000);

const BOUNCE_DOMAIN = 'bounces.mailyard.test';
/** SERVICE_DOMAIN, another domain than the bounce domain here. */
const SERVICE_DOMAIN = 'mailyard.test';
const FIXTURES = join(__dirname, '..', 'services', 'inbound-smtp', 'src', 'fixtures');
const fixture = (name: string) => readFileSync(join(FIXTURES, name));
const dir = mkdtempSync(join(tmpdir(), 'reports-intake-'));

let h: InboundHarness;
/** Tenant ids: A verified brand.test, B claims it unverified, C verified news.brand.test, D deleted it. */
const t = { a: '', b: '', c: '', d: '' };
const domainIds = { a: '', c: '' };

beforeAll(async () => {
  h = await startInbound({
    domains: [{ domain: 'in.example.com', users: [{ name: 'support' }] }],
    env: { BOUNCE_DOMAIN, SERVICE_DOMAIN, INBOUND_RECOVERY_LEASE_MS: '300' },
  });
  const db = h.ctx.db;
  for (const k of ['a', 'b', 'c', 'd'] as const) t[k] = await newTenant(db);
  domainIds.a = await insertDomainMailer(db, h.ctx.sealer, t.a, { domain: 'brand.test', key: dkimKeyPair() });
  await insertDomainMailer(db, h.ctx.sealer, t.b, {
    domain: 'brand.test',
    key: dkimKeyPair(),
    verified: false,
  });
  domainIds.c = await insertDomainMailer(db, h.ctx.sealer, t.c, {
    domain: 'news.brand.test',
    key: dkimKeyPair(),
  });
  const gone = await insertDomainMailer(db, h.ctx.sealer, t.d, { domain: 'brand.test', key: dkimKeyPair() });
  await db.query('UPDATE domains SET deleted_at = now() WHERE id = $1', [gone]);
});

afterAll(async () => {
  await h?.stop();
});

interface Attachment {
  type: string;
  name: string;
  bytes: Buffer;
}

/** A report mail as the providers send it: a short text part, then each report base64-encoded. */
function reportMail(from: string, subject: string, attachments: Attachment[]): string {
  const boundary = `b_${Math.random().toString(36).slice(2)}`;
  const parts = attachments.map((a) =>
    [
      `--${boundary}`,
      `Content-Type: ${a.type}; name="${a.name}"`,
      `Content-Disposition: attachment; filename="${a.name}"`,
      'Content-Transfer-Encoding: base64',
      '',
      a.bytes.toString('base64').replace(/.{76}/g, '$&\r\n'),
    ].join('\r\n'),
  );
  return [
    `From: ${from}`,
    `Subject: ${subject}`,
    `Message-ID: <${Math.random().toString(36).slice(2)}@reporter.example>`,
    'MIME-Version: 1.0',
    `Content-Type: multipart/mixed; boundary="${boundary}"`,
    '',
    `--${boundary}`,
    'Content-Type: text/plain; charset=UTF-8',
    '',
    `This is an aggregate report: ${subject}`,
    ...parts,
    `--${boundary}--`,
    '',
  ].join('\r\n');
}

let n = 0;
async function mail(to: string, message: string): Promise<string> {
  const file = join(dir, `m${++n}.eml`);
  writeFileSync(file, message);
  return h.swaks(['--to', to, '--from', 'noreply@reporter.example', '--data', `@${file}`]);
}

async function allProcessed(): Promise<void> {
  await eventually(async () => {
    const { rows } = await h.ctx.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM inbound_messages WHERE status = 'stored'",
    );
    return rows[0]!.n === 0;
  }, 'inbound messages processed');
}

const dmarcReports = async () =>
  (
    await h.ctx.db.query<{
      tenant_id: string;
      domain_id: string;
      org_name: string;
      report_id: string;
      rows: number;
    }>(
      `SELECT r.tenant_id, r.domain_id, r.org_name, r.report_id,
              (SELECT count(*)::int FROM dmarc_report_rows w WHERE w.report_id = r.id) AS rows
         FROM dmarc_reports r ORDER BY r.tenant_id, r.org_name`,
    )
  ).rows;

const google = fixture('dmarc-google.xml');
const googleMail = reportMail(
  'noreply-dmarc-support@google.com',
  'Report domain: brand.test Submitter: google.com',
  [
    {
      type: 'application/gzip',
      name: 'google.com!brand.test!1700006400!1700092799.xml.gz',
      bytes: gzipSync(google),
    },
  ],
);

test('other addresses on the report domains are refused at RCPT', async () => {
  for (const address of [`postmaster@${SERVICE_DOMAIN}`, `fbl@${SERVICE_DOMAIN}`, `dmarcx@${BOUNCE_DOMAIN}`])
    expect(await h.swaks(['--to', address, '--from', 'a@reporter.example'])).toMatch(
      /<\*\* 550 5\.1\.1 <.*>: no such mailbox/,
    );
  expect(await h.swaks(['--to', `dmarc@sub.${SERVICE_DOMAIN}`, '--from', 'a@reporter.example'])).toMatch(
    /<\*\* 550 5\.1\.2 /,
  );
});

test('DMARC reports (gzip, and a zip of two) are stored for the verified domains only', async () => {
  expect(await mail(`dmarc@${BOUNCE_DOMAIN}`, googleMail)).toMatch(/<- {2}250 2\.0\.0 Ok: queued as inmsg_/);
  const zip = buildZip([
    {
      name: 'enterprise.protection.outlook.com!brand.test!1700006400!1700092800.xml',
      data: fixture('dmarc-microsoft.xml'),
    },
    { name: 'yahoo.com!news.brand.test!1700006400!1700092799.xml', data: fixture('dmarc-yahoo.xml') },
  ]);
  const zipMail = reportMail('dmarcreport@microsoft.com', 'Report Domain: brand.test', [
    { type: 'application/zip', name: 'reports.zip', bytes: zip },
  ]);
  expect(await mail(`DMARC@${SERVICE_DOMAIN.toUpperCase()}`, zipMail)).toMatch(/<- {2}250 /);
  await allProcessed();

  const reports = await dmarcReports();
  const of = (tenant: string) =>
    reports.filter((r) => r.tenant_id === tenant).map((r) => [r.domain_id, r.org_name, r.report_id, r.rows]);
  expect(of(t.a)).toEqual([
    [domainIds.a, 'Enterprise Outlook', 'f4c1b0a2e9d84b7c9a3e5d6f7a8b9c0d', 1],
    [domainIds.a, 'Yahoo', '1700092800.374511', 1],
    [domainIds.a, 'google.com', '5717107811868587391', 2],
  ]);
  // news.brand.test: its own verified tenant gets it too
  expect(of(t.c)).toEqual([[domainIds.c, 'Yahoo', '1700092800.374511', 1]]);
  // unverified and deleted claims to brand.test get nothing
  expect(of(t.b)).toEqual([]);
  expect(of(t.d)).toEqual([]);

  const { rows } = await h.ctx.db.query(
    `SELECT w.n, w.source_ip, w.count, w.disposition, w.dkim, w.spf, w.header_from, w.dkim_auth, w.spf_auth,
            r.begin_at, r.end_at, r.policy, r.policy_domain, r.reporter_email, r.inbound_message_id
       FROM dmarc_report_rows w JOIN dmarc_reports r ON r.id = w.report_id
      WHERE r.tenant_id = $1 AND r.org_name = 'google.com' ORDER BY w.n`,
    [t.a],
  );
  expect(rows[0]).toMatchObject({
    n: 0,
    source_ip: '203.0.113.25',
    count: 12,
    disposition: 'none',
    dkim: 'pass',
    spf: 'pass',
    header_from: 'brand.test',
    dkim_auth: [{ domain: 'brand.test', selector: 'mailyard', result: 'pass' }],
    spf_auth: [{ domain: 'bounces.brand.test', result: 'pass' }],
    begin_at: new Date(1700006400 * 1000),
    end_at: new Date(1700092799 * 1000),
    policy: { domain: 'brand.test', adkim: 'r', aspf: 'r', p: 'none', sp: 'none', pct: 100 },
    policy_domain: 'brand.test',
    reporter_email: 'noreply-dmarc-support@google.com',
    inbound_message_id: expect.stringMatching(/^inmsg_/),
  });
  expect(rows[1]).toMatchObject({ n: 1, source_ip: '198.51.100.7', count: 3, dkim: 'fail', spf: 'fail' });
});

test('a report mailed again, or its message processed again, is stored once', async () => {
  const before = await dmarcReports();
  expect(await mail(`dmarc@${SERVICE_DOMAIN}`, googleMail)).toMatch(/<- {2}250 /);
  await allProcessed();
  expect(await dmarcReports()).toEqual(before);
  // The recovery path takes a message that is `stored` again (as after a crash before its
  // completion): it is read, parsed and matched again, and stores nothing new.
  const { rows } = await h.ctx.db.query<{ id: string }>(
    "UPDATE inbound_messages SET status = 'stored' WHERE id = (SELECT inbound_message_id FROM dmarc_reports WHERE org_name = 'google.com' LIMIT 1) RETURNING id",
  );
  expect(rows).toHaveLength(1);
  await allProcessed();
  expect(await dmarcReports()).toEqual(before);
  const metrics = await metricsRegistry.getSingleMetricAsString('mailyard_inbound_reports_total');
  expect(metrics).toMatch(/kind="dmarc",outcome="duplicate"\} [2-9]/);
});

test('TLS-RPT reports (tlsrpt+gzip and plain JSON) are stored per domain with their policies', async () => {
  const googleTls = reportMail(
    'noreply-smtp-tls-reporting@google.com',
    'Report Domain: brand.test Submitter: google.com',
    [
      {
        type: 'application/tlsrpt+gzip',
        name: 'google.com!brand.test!1700006400!1700092799!001.json.gz',
        bytes: gzipSync(fixture('tlsrpt-google.json')),
      },
    ],
  );
  expect(await mail(`tls-rpt@${SERVICE_DOMAIN}`, googleTls)).toMatch(/<- {2}250 /);
  const msTls = reportMail('tlsrpt-noreply@microsoft.com', 'Report Domain: brand.test', [
    {
      type: 'application/tlsrpt+json',
      name: 'microsoft.com!brand.test!1700006400!1700092799.json',
      bytes: fixture('tlsrpt-microsoft.json'),
    },
  ]);
  expect(await mail(`TLS-RPT@${BOUNCE_DOMAIN}`, msTls)).toMatch(/<- {2}250 /);
  await allProcessed();

  const { rows } = await h.ctx.db.query(
    `SELECT r.tenant_id, r.domain_id, r.organization_name, r.report_id, r.start_at, r.end_at, r.contact_info,
            p.n, p.policy_type, p.policy_domain, p.mx_host, p.successful, p.failed, p.failure_details
       FROM tls_reports r JOIN tls_report_policies p ON p.report_id = r.id
      ORDER BY r.tenant_id, r.organization_name, p.n`,
  );
  expect(rows).toEqual([
    {
      tenant_id: t.a,
      domain_id: domainIds.a,
      organization_name: 'Google Inc.',
      report_id: '2023-11-15T00:00:00Z_brand.test',
      start_at: new Date('2023-11-15T00:00:00Z'),
      end_at: new Date('2023-11-15T23:59:59Z'),
      contact_info: 'smtp-tls-reporting@google.com',
      n: 0,
      policy_type: 'sts',
      policy_domain: 'brand.test',
      mx_host: ['mx.brand.test'],
      successful: 120,
      failed: 3,
      failure_details: [
        {
          result_type: 'certificate-expired',
          failed_session_count: 3,
          sending_mta_ip: '209.85.220.41',
          receiving_mx_hostname: 'mx.brand.test',
          receiving_ip: '203.0.113.10',
        },
      ],
    },
    expect.objectContaining({
      tenant_id: t.a,
      organization_name: 'Microsoft Corporation',
      n: 0,
      policy_domain: 'brand.test',
      successful: 40,
      failed: 0,
    }),
    expect.objectContaining({
      tenant_id: t.a,
      organization_name: 'Microsoft Corporation',
      n: 1,
      policy_domain: 'mail.brand.test',
      successful: 7,
      failed: 2,
    }),
  ]);
});

test('a gzip bomb, a report for nobody, a mail without a report: accepted, refused, stored nowhere', async () => {
  const before = await dmarcReports();
  const member = gzipSync(Buffer.alloc(100 * 1024 * 1024), { level: 9 });
  const bomb = Buffer.concat(Array.from({ length: 10 }, () => member)); // 1 GB of zeros
  const bombMail = reportMail('evil@reporter.example', 'Report domain: brand.test', [
    { type: 'application/gzip', name: 'bomb.xml.gz', bytes: bomb },
  ]);
  expect(await mail(`dmarc@${SERVICE_DOMAIN}`, bombMail)).toMatch(/<- {2}250 /);
  const nobody = reportMail('noreply-dmarc-support@google.com', 'Report domain: elsewhere.test', [
    {
      type: 'text/xml',
      name: 'r.xml',
      bytes: Buffer.from(google.toString().replaceAll('brand.test', 'elsewhere.test')),
    },
  ]);
  expect(await mail(`dmarc@${SERVICE_DOMAIN}`, nobody)).toMatch(/<- {2}250 /);
  expect(await mail(`dmarc@${SERVICE_DOMAIN}`, reportMail('a@reporter.example', 'hello', []))).toMatch(
    /<- {2}250 /,
  );
  await allProcessed();
  expect(await dmarcReports()).toEqual(before);
  const metrics = await metricsRegistry.getSingleMetricAsString('mailyard_inbound_reports_total');
  expect(metrics).toMatch(/kind="dmarc",outcome="refused"\} [2-9]/);
  expect(metrics).toMatch(/kind="dmarc",outcome="unmatched"\} [1-9]/);
});
