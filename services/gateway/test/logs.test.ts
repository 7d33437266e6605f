import { MODES } from '@mailyard/testkit/modes';
import request from 'supertest';
import { useGateway } from './support/harness';
import { addDomainMailer } from './support/mailers.fixture';

type Entry = Record<string, unknown> & { ref_id: string; recipient: string };

/** GET /v1/email/logs: every filter, exact status, dates, cursor pages with totalCount, tenancy. */
for (const mode of MODES) {
  describe(`email logs API (${mode})`, () => {
    const gw = useGateway(mode, { RATE_LIMIT_STANDARD: '1000000' });
    let mailerId: string;
    const ref: Record<'s1' | 's2' | 's3' | 's4', string> = { s1: '', s2: '', s3: '', s4: '' };

    const send = async (body: Record<string, unknown>, k = gw.key) => {
      const res = await gw.post(
        '/v1/email/send',
        {
          from: { email: 'news@example.com' },
          mailer_id: mailerId,
          content: [{ type: 'text/plain', value: 'x' }],
          ...body,
        },
        k,
      );
      expect(res.status).toBe(200);
      return res.body.ref_id as string;
    };
    const logs = async (query = '', k = gw.key) => gw.get(`/v1/email/logs${query}`, k);
    const recipients = async (query: string) => {
      const res = await logs(query);
      expect(res.status).toBe(200);
      expect(res.body.totalCount).toBe(res.body.data.length);
      return (res.body.data as Entry[]).map((e) => e.recipient);
    };
    const setRow = (refId: string, recipient: string, set: string, params: unknown[] = []) =>
      gw.ctx.db.query(`UPDATE email_logs SET ${set} WHERE ref_id = $1 AND recipient = $2`, [
        refId,
        recipient,
        ...params,
      ]);
    const setCreated = async (refId: string, at: string) => {
      await gw.ctx.db.query('UPDATE email_logs SET created_at = $2 WHERE ref_id = $1', [refId, at]);
      await gw.ctx.db.query('UPDATE sends SET created_at = $2 WHERE ref_id = $1', [refId, at]);
    };

    beforeAll(async () => {
      mailerId = await addDomainMailer(gw.ctx, gw.tenantId, 'example.com');

      ref.s1 = await send({
        to: [{ email: 'alice@one.test' }],
        subject: 'Welcome aboard',
        campaign_id: 'c1',
      });
      ref.s2 = await send({
        to: [{ email: 'bob@two.test' }],
        cc: [{ email: 'carol@one.test' }],
        bcc: [{ email: 'dave@three.test' }],
        subject: 'Invoice 42 (100%_paid)',
        campaign_id: 'c2',
      });
      ref.s3 = await send({ to: [{ email: 'Eve@One.test' }], subject: 'welcome BACK' });
      ref.s4 = await send({ to: [{ email: 'frank@Bücher.example' }], subject: 'Grüße' });
      await setCreated(ref.s1, '2024-01-01T10:00:00Z');
      await setCreated(ref.s2, '2024-02-15T10:00:00Z');
      await setCreated(ref.s3, '2024-03-20T23:59:59.5Z');
      // What the send service records as events arrive:
      await setRow(
        ref.s1,
        'alice@one.test',
        "status = 'FAILED', last_event = 'SMTP_ERROR', failure_reason = 'Mailbox unavailable'",
      );
      await setRow(
        ref.s2,
        'bob@two.test',
        "status = 'MAIL_DELIVERED', last_event = 'MAIL_DELIVERED', message_id = '<m1@example.com>', delivered_at = $3",
        ['2024-02-15T10:05:00Z'],
      );
      await setRow(
        ref.s2,
        'carol@one.test',
        "status = 'MAIL_OPENED', last_event = 'MAIL_OPENED', delivered_at = $3",
        ['2024-02-16T08:00:00Z'],
      );
    });

    it('lists every recipient newest first with the documented entry fields', async () => {
      const res = await logs();
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['data', 'nextPageToken', 'success', 'totalCount']);
      expect(res.body).toMatchObject({ success: true, nextPageToken: null, totalCount: 6 });
      const data = res.body.data as Entry[];
      expect(data.map((e) => e.recipient)).toEqual([
        'frank@xn--bcher-kva.example',
        'Eve@one.test',
        'dave@three.test',
        'carol@one.test',
        'bob@two.test',
        'alice@one.test',
      ]);
      expect(data.find((e) => e.recipient === 'bob@two.test')).toEqual({
        ref_id: ref.s2,
        recipient: 'bob@two.test',
        recipient_type: 'to',
        status: 'MAIL_DELIVERED',
        subject: 'Invoice 42 (100%_paid)',
        mailer_id: mailerId,
        campaign_id: 'c2',
        message_id: '<m1@example.com>',
        created_at: '2024-02-15T10:00:00.000Z',
        delivered_at: '2024-02-15T10:05:00.000Z',
        last_event: 'MAIL_DELIVERED',
        failure_reason: '',
      });
      expect(data[0]).toEqual({
        ref_id: ref.s4,
        recipient: 'frank@xn--bcher-kva.example',
        recipient_type: 'to',
        status: 'QUEUED',
        subject: 'Grüße',
        mailer_id: mailerId,
        campaign_id: null,
        message_id: '',
        created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
        delivered_at: null,
        last_event: null,
        failure_reason: '',
      });
      expect(data.find((e) => e.recipient === 'alice@one.test')).toMatchObject({
        status: 'FAILED',
        last_event: 'SMTP_ERROR',
        failure_reason: 'Mailbox unavailable',
      });
    });

    it('filters by recipient email, case-insensitively and in IDNA form', async () => {
      expect(await recipients('?email=EVE@one.TEST')).toEqual(['Eve@one.test']);
      expect(await recipients(`?email=${encodeURIComponent('frank@bücher.example')}`)).toEqual([
        'frank@xn--bcher-kva.example',
      ]);
      expect(await recipients('?email=nobody@one.test')).toEqual([]);
      const bad = await logs('?email=not-an-address');
      expect(bad.status).toBe(400);
      expect(bad.body).toEqual({ success: false, error: 'email must be a valid email address' });
    });

    it('filters by recipient domain (exact, no subdomains)', async () => {
      expect(await recipients('?domain=one.test')).toEqual([
        'Eve@one.test',
        'carol@one.test',
        'alice@one.test',
      ]);
      expect(await recipients('?domain=ONE.Test')).toHaveLength(3);
      expect(await recipients(`?domain=${encodeURIComponent('Bücher.example')}`)).toEqual([
        'frank@xn--bcher-kva.example',
      ]);
      expect(await recipients('?domain=sub.one.test')).toEqual([]);
      const bad = await logs('?domain=one_test');
      expect(bad.status).toBe(400);
      expect(bad.body).toEqual({ success: false, error: 'domain must be a valid domain name' });
    });

    it('filters by refId', async () => {
      expect(await recipients(`?refId=${ref.s2}`)).toEqual([
        'dave@three.test',
        'carol@one.test',
        'bob@two.test',
      ]);
      expect(await recipients('?refId=01HZZZZZZZZZZZZZZZZZZZZZZZ')).toEqual([]);
    });

    it('filters by created date: bare dates are whole UTC days, date-times are inclusive', async () => {
      expect(await recipients('?startDate=2024-02-01')).toHaveLength(5);
      expect(await recipients('?endDate=2024-02-15')).toEqual([
        'dave@three.test',
        'carol@one.test',
        'bob@two.test',
        'alice@one.test',
      ]);
      expect(await recipients('?startDate=2024-02-15T10:00:00Z&endDate=2024-02-15T10:00:00Z')).toHaveLength(
        3,
      );
      expect(await recipients('?startDate=2024-02-15T11:00:00%2B01:00&endDate=2024-03-31')).toHaveLength(4);
      expect(await recipients('?startDate=2024-03-20&endDate=2024-03-20')).toEqual(['Eve@one.test']);
      expect(await recipients('?startDate=2024-03-20&endDate=2024-03-20T23:59:59Z')).toEqual([]);
      expect(await recipients('?startDate=2024-03-20T23:59:59.4Z&endDate=2024-03-20T23:59:59.500Z')).toEqual([
        'Eve@one.test',
      ]);
    });

    it.each([
      ['?startDate=yesterday', 'startDate must be an RFC 3339 date-time or a YYYY-MM-DD date'],
      ['?endDate=2024-02-30', 'endDate must be an RFC 3339 date-time or a YYYY-MM-DD date'],
      ['?startDate=2024-02-01T25:00:00Z', 'startDate must be an RFC 3339 date-time or a YYYY-MM-DD date'],
      ['?startDate=2024-02-01T10:00:00', 'startDate must be an RFC 3339 date-time or a YYYY-MM-DD date'],
      [
        '?deliveredStartDate=1700000000',
        'deliveredStartDate must be an RFC 3339 date-time or a YYYY-MM-DD date',
      ],
      ['?startDate=2024-03-01&endDate=2024-02-01', 'startDate must not be after endDate'],
      [
        '?deliveredStartDate=2024-03-01&deliveredEndDate=2024-02-01',
        'deliveredStartDate must not be after deliveredEndDate',
      ],
    ])('rejects %s', async (query, message) => {
      const res = await logs(query);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ success: false, error: message });
    });

    it('matches status exactly and rejects values that are not exact status names', async () => {
      expect(await recipients('?status=MAIL_DELIVERED')).toEqual(['bob@two.test']);
      expect(await recipients('?status=MAIL_OPENED')).toEqual(['carol@one.test']);
      expect(await recipients('?status=QUEUED')).toEqual([
        'frank@xn--bcher-kva.example',
        'Eve@one.test',
        'dave@three.test',
      ]);
      expect(await recipients('?status=MAIL_BOUNCE')).toEqual([]);
      for (const bad of ['mail_delivered', 'DELIVERED', 'MAIL_SPAM', 'QUEUED%20']) {
        const res = await logs(`?status=${bad}`);
        expect(res.status).toBe(400);
        expect(res.body).toEqual({
          success: false,
          error:
            'status must be one of SCHEDULED, QUEUED, FAILED, MAIL_DELIVERED, MAIL_OPENED, MAIL_CLICKED, MAIL_BOUNCE, MAIL_UNSUBSCRIBED, CANCELLED',
        });
      }
    });

    it('filters by subject substring, case-insensitively, with % and _ taken literally', async () => {
      expect(await recipients('?subject=WELCOME')).toEqual(['Eve@one.test', 'alice@one.test']);
      expect(await recipients('?subject=100%25_')).toHaveLength(3);
      expect(await recipients('?subject=%25')).toHaveLength(3);
      expect(await recipients('?subject=_')).toHaveLength(3);
      expect(await recipients(`?subject=${encodeURIComponent('grüße')}`)).toHaveLength(1);
      expect(await recipients('?subject=nothing')).toEqual([]);
    });

    it('filters by campaignId (exact)', async () => {
      expect(await recipients('?campaignId=c2')).toHaveLength(3);
      expect(await recipients('?campaignId=c1')).toEqual(['alice@one.test']);
      expect(await recipients('?campaignId=C2')).toEqual([]);
    });

    it('filters by recipientType', async () => {
      expect(await recipients('?recipientType=cc')).toEqual(['carol@one.test']);
      expect(await recipients('?recipientType=bcc')).toEqual(['dave@three.test']);
      expect(await recipients('?recipientType=to')).toHaveLength(4);
      const bad = await logs('?recipientType=CC');
      expect(bad.status).toBe(400);
      expect(bad.body).toEqual({ success: false, error: 'recipientType must be one of to, cc, bcc' });
    });

    it('filters by delivered date; rows never delivered do not match', async () => {
      expect(await recipients('?deliveredStartDate=2024-02-16')).toEqual(['carol@one.test']);
      expect(await recipients('?deliveredEndDate=2024-02-15')).toEqual(['bob@two.test']);
      expect(await recipients('?deliveredStartDate=2024-01-01&deliveredEndDate=2030-01-01')).toEqual([
        'carol@one.test',
        'bob@two.test',
      ]);
      expect(
        await recipients(
          '?deliveredStartDate=2024-02-15T10:05:00.001Z&deliveredEndDate=2024-02-16T07:59:59Z',
        ),
      ).toEqual([]);
    });

    it('combines filters with AND and ignores empty parameters', async () => {
      expect(await recipients('?domain=one.test&status=QUEUED')).toEqual(['Eve@one.test']);
      expect(
        await recipients(`?refId=${ref.s2}&recipientType=to&status=MAIL_DELIVERED&campaignId=c2`),
      ).toEqual(['bob@two.test']);
      expect(await recipients('?status=&email=&subject=')).toHaveLength(6);
      const repeated = await logs('?status=QUEUED&status=FAILED');
      expect(repeated.status).toBe(400);
      expect(repeated.body).toEqual({ success: false, error: 'status must be a string' });
    });

    it('pages with a cursor: totalCount counts every match, no duplicates or gaps while rows are added', async () => {
      const all = (await logs()).body.data as Entry[];
      const seen: Entry[] = [];
      let token: string | null = null;
      let pages = 0;
      let late = '';
      do {
        const res = await logs(`?pageSize=4${token ? `&pageToken=${encodeURIComponent(token)}` : ''}`);
        expect(res.status).toBe(200);
        expect(res.body.totalCount).toBe(pages === 0 ? 6 : 7);
        seen.push(...res.body.data);
        token = res.body.nextPageToken;
        if (pages === 0) late = await send({ to: [{ email: 'late@one.test' }], subject: 'late' });
        pages++;
      } while (token);
      expect(pages).toBe(2);
      expect(seen.map((e) => `${e.ref_id}/${e.recipient}`)).toEqual(
        all.map((e) => `${e.ref_id}/${e.recipient}`),
      );
      const first = await logs('?pageSize=1');
      expect(first.body.data[0].ref_id).toBe(late);
      await gw.ctx.db.query('DELETE FROM sends WHERE ref_id = $1', [late]);
    });

    it('pages filtered results with totalCount of the filter', async () => {
      const p1 = await logs('?domain=one.test&pageSize=2');
      expect(p1.body).toMatchObject({ totalCount: 3, nextPageToken: expect.any(String) });
      expect(p1.body.data).toHaveLength(2);
      const p2 = await logs(
        `?domain=one.test&pageSize=2&pageToken=${encodeURIComponent(p1.body.nextPageToken)}`,
      );
      expect(p2.body).toMatchObject({ totalCount: 3, nextPageToken: null });
      expect(p2.body.data.map((e: Entry) => e.recipient)).toEqual(['alice@one.test']);
    });

    it('defaults pageSize to 20, allows 50 and rejects values outside 1..50 and foreign tokens', async () => {
      const t = await gw.newTenant();
      const mailer = await addDomainMailer(gw.ctx, t.tenantId, 'example.com');
      const to = Array.from({ length: 55 }, (_, i) => ({ email: `r${i}@bulk.test` }));
      const res = await gw.post(
        '/v1/email/send',
        {
          from: { email: 'a@example.com' },
          to,
          mailer_id: mailer,
          subject: 's',
          content: [{ type: 'text/plain', value: 'x' }],
        },
        t.apiKey,
      );
      expect(res.status).toBe(200);
      const first = await logs('', t.apiKey);
      expect(first.body.data).toHaveLength(20);
      expect(first.body.totalCount).toBe(55);
      expect((await logs('?pageSize=50', t.apiKey)).body.data).toHaveLength(50);
      for (const size of ['0', '51', 'abc', '2.5']) {
        const bad = await logs(`?pageSize=${size}`, t.apiKey);
        expect(bad.status).toBe(400);
        expect(bad.body).toEqual({ success: false, error: 'pageSize must be an integer between 1 and 50' });
      }
      const token = await logs('?pageToken=garbage', t.apiKey);
      expect(token.status).toBe(400);
      expect(token.body).toEqual({ success: false, error: 'Invalid pageToken' });
    });

    it("never shows another tenant's logs", async () => {
      const other = await gw.newTenant();
      const none = await logs('', other.apiKey);
      expect(none.body).toEqual({ success: true, data: [], nextPageToken: null, totalCount: 0 });
      expect((await logs(`?refId=${ref.s2}`, other.apiKey)).body.totalCount).toBe(0);
      expect((await logs('?email=bob@two.test', other.apiKey)).body.totalCount).toBe(0);
      const mine = (await logs()).body.data as Entry[];
      expect(mine.every((e) => Object.values(ref).includes(e.ref_id))).toBe(true);
      expect(gw.tenantId).not.toBe(other.tenantId);
    });

    it('needs an API key', async () => {
      expect((await request(gw.app).get('/v1/email/logs')).status).toBe(401);
    });
  });
}
