/**
 * GET /v1/stats end to end on the real servers: sends through the gateway API and the send
 * service to a real SMTP receiver (one recipient refused with 550: a final SMTP_ERROR; one
 * suppressed: MAIL_GENERATION_REJECTION), opens and clicks through the tracking service, a
 * redelivered event, then the counts per day and per hour, the filters (sending domain, mailer,
 * campaign), date parsing, bad input and tenant isolation, all read back over the API.
 */
import type { EmailEvent, StatsCounts } from '@mailyard/contracts';
import { start as startSend } from '@mailyard/send';
import { createTenant, recordEmailEvents } from '@mailyard/store';
import { eventually } from '@mailyard/testkit/eventually';
import { insertSmtpMailer } from '@mailyard/testkit/fixtures';
import { parseMessage } from '@mailyard/testkit/mime';
import { type SmtpReceiver, startSmtpReceiver } from '@mailyard/testkit/peers/smtp-receiver';
import { freePort } from '@mailyard/testkit/process';
import { createStores } from '@mailyard/testkit/stores';
import { trackedSendEnv } from '@mailyard/testkit/tracked-send-env';
import { start as startTracking } from '@mailyard/tracking';
import request from 'supertest';
import { type OnContext, startOnContext } from './support/send-stack';

jest.setTimeout(120_000);

let on: OnContext;
let ctx: OnContext['ctx'];
let receiver: SmtpReceiver;
let gateway: OnContext['app'];
let trackingBase: string;
let drop: () => Promise<void> = async () => {};

beforeAll(async () => {
  receiver = await startSmtpReceiver({
    onRcpt: (address) => (address.startsWith('gone@') ? [550, '5.1.1 No such user'] : undefined),
  });
  const trackingPort = await freePort();
  const stores = await createStores();
  drop = stores.drop;
  on = await startOnContext('stats-test', { ...stores.env, ...trackedSendEnv(trackingPort) }, [
    startSend,
    startTracking,
  ]);
  ctx = on.ctx;
  gateway = on.app;
  trackingBase = `http://127.0.0.1:${trackingPort}`;
});

afterAll(async () => {
  await on?.stop();
  await receiver?.close();
  await drop();
});

async function newTenant() {
  const t = await createTenant(ctx.db, {
    name: `s-${Math.random().toString(36).slice(2, 8)}`,
    tier: 'enterprise',
  });
  const m1 = await insertSmtpMailer(ctx.db, ctx.sealer, t.id, { port: receiver.port });
  const m2 = await insertSmtpMailer(ctx.db, ctx.sealer, t.id, { port: receiver.port });
  return { id: t.id, auth: { Authorization: `Bearer ${t.apiKey}` }, m1, m2 };
}
type Tenant = Awaited<ReturnType<typeof newTenant>>;

async function sendMail(
  t: Tenant,
  o: { from: string; to: string; mailer: string; campaign?: string; tracked?: boolean; key?: string },
): Promise<string> {
  const req = request(gateway).post('/v1/email/send').set(t.auth);
  if (o.key) req.set('Idempotency-Key', o.key);
  const res = await req
    .send({
      from: { email: o.from },
      to: [{ email: o.to }],
      mailer_id: o.mailer,
      subject: 'Stats',
      content: [{ type: 'text/html', value: '<p>Hi <a href="https://shop.example/p">shop</a></p>' }],
      ...(o.campaign ? { campaign_id: o.campaign } : {}),
      ...(o.tracked
        ? { settings: { open_tracking: { enable: true }, click_tracking: { enable: true } } }
        : {}),
    })
    .expect(200);
  return res.body.ref_id;
}

const logOf = async (t: Tenant, refId: string) =>
  (await request(gateway).get('/v1/email/logs').query({ refId }).set(t.auth).expect(200)).body.data[0] as
    | { status: string }
    | undefined;
const statusIs = (t: Tenant, refId: string, status: string) =>
  eventually(async () => (await logOf(t, refId))?.status === status, `${refId} ${status}`);

async function getStats(t: Tenant, query: Record<string, string> = {}) {
  const res = await request(gateway).get('/v1/stats').query(query).set(t.auth);
  expect(res.status).toBe(200);
  return res.body as { success: true; data: Array<StatsCounts & { start: string }>; totals: StatsCounts };
}

const zero: StatsCounts = {
  requested: 0,
  delivered: 0,
  bounced: 0,
  spam: 0,
  opened: 0,
  unique_opened: 0,
  clicked: 0,
  unique_clicked: 0,
  unsubscribed: 0,
  failed: 0,
  rejected: 0,
};
const counts = (c: Partial<StatsCounts>): StatsCounts => ({ ...zero, ...c });
const today = () => new Date().toISOString().slice(0, 10);
const path = (url: string) => url.slice(trackingBase.length);

it('counts a fresh tenant exactly, per day and per hour, with filters, dates and isolation', async () => {
  const t = await newTenant();
  await request(gateway)
    .post('/v1/email/unsubscribe')
    .set(t.auth)
    .send({ email: 'left@example.com' })
    .expect(200);

  const tracked = await sendMail(t, {
    from: 'news@Alpha.example',
    to: 'reader@example.com',
    mailer: t.m1,
    campaign: 'spring',
    tracked: true,
  });
  const plain = await sendMail(t, {
    from: 'news@alpha.example',
    to: 'other@example.com',
    mailer: t.m1,
    campaign: 'spring',
    key: 'stats-idem-1',
  });
  const failed = await sendMail(t, { from: 'billing@beta.example', to: 'gone@example.com', mailer: t.m2 });
  const suppressed = await sendMail(t, { from: 'news@alpha.example', to: 'left@example.com', mailer: t.m1 });
  await statusIs(t, tracked, 'MAIL_DELIVERED');
  await statusIs(t, plain, 'MAIL_DELIVERED');
  await statusIs(t, failed, 'FAILED');
  await statusIs(t, suppressed, 'FAILED');

  // Two opens and a click of the tracked copy, through the tracking service.
  const received = receiver.messages.find((m) => m.to.includes('reader@example.com'))!;
  const html = parseMessage(received.raw).parts.find((p) => p.type === 'text/html')!.text;
  const pixel = /<img src="([^"]+\/o\/[^"]+)"/.exec(html)![1]!;
  const click = /href="([^"]+\/c\/[^"]+)"/.exec(html)![1]!;
  await request(trackingBase).get(path(pixel)).expect(200);
  await request(trackingBase).get(path(pixel)).expect(200);
  await request(trackingBase).get(path(click)).expect(302);
  await eventually(
    async () => (await getStats(t)).totals.clicked === 1 && (await getStats(t)).totals.opened === 2,
    'opens and click counted',
  );

  // A redelivered event (the delivery of `plain` recorded again, as a redelivered command or
  // callback would) is not counted again.
  const { rows } = await ctx.db.query<{
    copy_id: string;
    attempt: number;
    payload: EmailEvent;
    log_id: string;
  }>(
    `SELECT e.copy_id, e.attempt, e.payload, l.id AS log_id
       FROM email_events e JOIN email_logs l ON l.copy_id = e.copy_id
      WHERE e.ref_id = $1 AND e.event = 'MAIL_DELIVERED'`,
    [plain],
  );
  const r = rows[0]!;
  await ctx.db.query('UPDATE email_logs SET send_outcome = NULL WHERE id = $1', [r.log_id]);
  const again = await recordEmailEvents(ctx.db, [
    {
      tenantId: t.id,
      copyId: r.copy_id,
      attempt: r.attempt,
      recipients: [{ logId: r.log_id, email: 'other@example.com' }],
      event: r.payload,
    },
  ]);
  expect(again).toEqual([]);

  const all = counts({
    requested: 4,
    delivered: 2,
    opened: 2,
    unique_opened: 1,
    clicked: 1,
    unique_clicked: 1,
    failed: 1,
    rejected: 1,
  });
  // Default: the last 7 days including today, by day, every day present.
  const week = await getStats(t);
  expect(week.success).toBe(true);
  expect(week.data).toHaveLength(7);
  expect(week.data[6]!.start).toBe(`${today()}T00:00:00Z`);
  expect(week.totals).toEqual(all);
  expect(week.data[6]).toEqual({ start: `${today()}T00:00:00Z`, ...all });
  expect(week.data[0]).toEqual({ start: week.data[0]!.start, ...zero });

  // A bare date is that whole UTC day; by hour, 24 buckets summing to the same.
  const day = await getStats(t, { startDate: today(), endDate: today() });
  expect(day.data).toEqual([{ start: `${today()}T00:00:00Z`, ...all }]);
  const hours = await getStats(t, { startDate: today(), endDate: today(), granularity: 'hour' });
  expect(hours.data).toHaveLength(24);
  expect(hours.data[0]!.start).toBe(`${today()}T00:00:00Z`);
  expect(hours.totals).toEqual(all);
  const nowHour = new Date().getUTCHours();
  expect(hours.data.slice(nowHour + 1).every((b) => b.requested === 0 && b.delivered === 0)).toBe(true);

  // RFC 3339 bounds; a range that ended yesterday holds nothing of today.
  const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
  expect((await getStats(t, { endDate: yesterday })).totals).toEqual(zero);
  expect(
    (await getStats(t, { startDate: `${today()}T00:00:00Z`, endDate: new Date().toISOString() })).totals,
  ).toEqual(all);

  // Filters: the From address's domain (any case), the mailer, the campaign.
  expect((await getStats(t, { domain: 'ALPHA.example' })).totals).toEqual(
    counts({
      requested: 3,
      delivered: 2,
      opened: 2,
      unique_opened: 1,
      clicked: 1,
      unique_clicked: 1,
      rejected: 1,
    }),
  );
  expect((await getStats(t, { domain: 'beta.example' })).totals).toEqual(counts({ requested: 1, failed: 1 }));
  expect((await getStats(t, { mailer_id: t.m2 })).totals).toEqual(counts({ requested: 1, failed: 1 }));
  expect((await getStats(t, { campaignId: 'spring' })).totals).toEqual(
    counts({ requested: 2, delivered: 2, opened: 2, unique_opened: 1, clicked: 1, unique_clicked: 1 }),
  );
  expect((await getStats(t, { campaignId: 'spring', mailer_id: t.m2 })).totals).toEqual(zero);

  // Another tenant sees none of it, even naming this tenant's mailer.
  const other = await newTenant();
  expect((await getStats(other)).totals).toEqual(zero);
  expect((await getStats(other, { mailer_id: t.m1 })).totals).toEqual(zero);
});

it('answers bad input with 400 envelopes', async () => {
  const t = await newTenant();
  const bad = async (query: Record<string, string>, message: string) => {
    const res = await request(gateway).get('/v1/stats').query(query).set(t.auth).expect(400);
    expect(res.body).toEqual({ success: false, error: message });
  };
  await bad({ granularity: 'week' }, 'granularity must be one of day, hour');
  await bad({ startDate: '2026-02-30' }, 'startDate must be an RFC 3339 date-time or a YYYY-MM-DD date');
  await bad({ startDate: '2026-03-02', endDate: '2026-03-01' }, 'startDate must not be after endDate');
  await bad(
    { startDate: '2026-01-01', endDate: '2026-02-01', granularity: 'hour' },
    'The date range covers too many hours: at most 744 (31 days) with granularity hour',
  );
  await bad({ domain: 'no spaces.example' }, 'domain must be a valid domain name');
  await request(gateway).get('/v1/stats').expect(401);
});
