/**
 * The stats rollups on real PostgreSQL, through the real writers: `requested` with the accepted
 * send (sends.insertAccepted and insertAcceptedBatch), every other counter with the event row
 * (recordEmailEvents); a redelivered event counts nothing; the first open/click of a recipient
 * copy counts once as unique, also when the opens are written concurrently or in one batch; the
 * dimensions (sending domain, mailer, campaign) and tenants kept apart.
 */
import {
  type EmailEvent,
  STATS_COUNTERS,
  type StatsCounts,
  type StoredSendRequest,
  ulid,
} from '@mailyard/contracts';
import type { Db } from '@mailyard/platform';
import { useMigratedDatabase } from '@mailyard/testkit/migrated-database';
import { emailEvent } from '@mailyard/testkit/webhooks';
import {
  type EmailEventRecord,
  createTenant,
  recordEmailEventBatch,
  recordEmailEvents,
  sends,
  stats,
} from '../src';

const database = useMigratedDatabase();
let db: Db;

beforeAll(() => {
  db = database.db();
});

const DAY = 86_400_000;

/** The tenant's totals of today (UTC), optionally filtered. */
async function totals(
  tenantId: string,
  filter: { domain?: string; mailerId?: string; campaignId?: string } = {},
): Promise<StatsCounts> {
  const from = Math.floor(Date.now() / DAY) * DAY - DAY;
  const found = await stats.buckets(db, {
    tenantId,
    granularity: 'day',
    from,
    to: from + 3 * DAY,
    ...filter,
  });
  const sum = Object.fromEntries(STATS_COUNTERS.map((c) => [c, 0])) as StatsCounts;
  for (const counts of found.values()) for (const c of STATS_COUNTERS) sum[c] += counts[c];
  return sum;
}

const only = (counts: Partial<StatsCounts>): StatsCounts => ({
  ...(Object.fromEntries(STATS_COUNTERS.map((c) => [c, 0])) as StatsCounts),
  ...counts,
});

interface Sent {
  refId: string;
  logs: Array<{ id: string; copyId: string; email: string }>;
}

/** Accepts a send through sends.insertAccepted (idempotency key) or insertAcceptedBatch. */
async function accept(
  tenantId: string,
  o: { from: string; mailerId: string; campaignId?: string; to: string[]; batch?: boolean },
): Promise<Sent> {
  const refId = ulid();
  const send = {
    refId,
    tenantId,
    mailerId: o.mailerId,
    campaignId: o.campaignId ?? null,
    customArgs: null,
    request: {
      from: { email: o.from },
      to: o.to.map((email) => ({ email })),
      subject: 's',
      content: [],
    } as unknown as StoredSendRequest,
  };
  const recipients = o.to.map((email, i) => ({
    copyId: `${refId}.${i + 1}`,
    recipient: email,
    recipientDomain: email.split('@')[1]!,
    recipientType: 'to' as const,
  }));
  if (o.batch) await sends.insertAcceptedBatch(db, [{ send, recipients, outbox: [] }]);
  else
    expect(
      await sends.insertAccepted(
        db,
        { ...send, idempotencyKey: `k-${refId}`, requestHash: null },
        recipients,
        [],
      ),
    ).toBe(true);
  const { rows } = await db.query<{ id: string; copy_id: string; recipient: string }>(
    'SELECT id, copy_id, recipient FROM email_logs WHERE ref_id = $1 ORDER BY copy_id',
    [refId],
  );
  return { refId, logs: rows.map((r) => ({ id: r.id, copyId: r.copy_id, email: r.recipient })) };
}

function event(name: EmailEvent['event'], refId: string, email: string, retry?: boolean): EmailEvent {
  return emailEvent(name, new Date().toISOString(), {
    ref_id: refId,
    mailer_id: 'm1',
    email: [email],
    custom_args: null,
    ...(name === 'SMTP_ERROR' ? { attempt: 1, max_attempts: 3, retry_scheduled: retry } : {}),
  });
}

/** A record of `name` for recipient copy `i` of `s` (a send event when `attempt` is given). */
const rec = (
  tenantId: string,
  s: Sent,
  i: number,
  name: EmailEvent['event'],
  o: { attempt?: number; retry?: boolean } = {},
): EmailEventRecord => ({
  tenantId,
  copyId: s.logs[i]!.copyId,
  recipients: [{ logId: s.logs[i]!.id, email: s.logs[i]!.email }],
  event: event(name, s.refId, s.logs[i]!.email, o.retry),
  ...(o.attempt === undefined ? {} : { attempt: o.attempt }),
});

it('counts requested at accept and each send outcome once, also when the event is recorded again', async () => {
  const t = await createTenant(db, { name: 'stats-a', tier: 'standard' });
  const a = await accept(t.id, {
    from: 'news@Alpha.example',
    mailerId: 'm1',
    campaignId: 'spring',
    to: ['a@x.test', 'b@x.test', 'c@x.test', 'd@x.test', 'e@x.test'],
  });
  const b = await accept(t.id, { from: 'info@beta.example', mailerId: 'm2', to: ['f@x.test'], batch: true });
  expect(await totals(t.id)).toEqual(only({ requested: 6 }));

  await recordEmailEvents(db, [rec(t.id, a, 0, 'MAIL_DELIVERED', { attempt: 1 })]);
  // Redelivered: the same outcome of the same attempt writes no event and counts nothing.
  expect(await recordEmailEvents(db, [rec(t.id, a, 0, 'MAIL_DELIVERED', { attempt: 1 })])).toEqual([]);
  // A retry-scheduled failure is progress, not a failure; the final one is.
  await recordEmailEvents(db, [rec(t.id, a, 1, 'SMTP_ERROR', { attempt: 1, retry: true })]);
  await recordEmailEvents(db, [rec(t.id, a, 1, 'SMTP_ERROR', { attempt: 2, retry: false })]);
  await recordEmailEvents(db, [rec(t.id, a, 1, 'SMTP_ERROR', { attempt: 2, retry: false })]);
  await recordEmailEvents(db, [rec(t.id, a, 2, 'PHISHING', { attempt: 1 })]);
  await recordEmailEvents(db, [rec(t.id, a, 3, 'MAIL_GENERATION_REJECTION', { attempt: 1 })]);
  await recordEmailEvents(db, [rec(t.id, b, 0, 'MAIL_DELIVERED', { attempt: 1 })]);
  await recordEmailEvents(db, [rec(t.id, b, 0, 'MAIL_BOUNCE'), rec(t.id, b, 0, 'MAIL_SPAM')]);

  expect(await totals(t.id)).toEqual(
    only({ requested: 6, delivered: 2, failed: 1, rejected: 2, bounced: 1, spam: 1 }),
  );
  // Dimensions: the From domain (lowercased), the mailer, the campaign.
  expect(await totals(t.id, { domain: 'alpha.example' })).toEqual(
    only({ requested: 5, delivered: 1, failed: 1, rejected: 2 }),
  );
  expect(await totals(t.id, { mailerId: 'm2' })).toEqual(
    only({ requested: 1, delivered: 1, bounced: 1, spam: 1 }),
  );
  expect(await totals(t.id, { campaignId: 'spring', mailerId: 'm1' })).toEqual(
    only({ requested: 5, delivered: 1, failed: 1, rejected: 2 }),
  );
  expect(await totals(t.id, { campaignId: 'autumn' })).toEqual(only({}));
  // Another tenant sees nothing of it.
  const other = await createTenant(db, { name: 'stats-b', tier: 'standard' });
  expect(await totals(other.id)).toEqual(only({}));
});

it('counts every open and click, and the first of each recipient copy once as unique', async () => {
  const t = await createTenant(db, { name: 'stats-c', tier: 'standard' });
  const s = await accept(t.id, { from: 'news@gamma.example', mailerId: 'm1', to: ['a@x.test', 'b@x.test'] });
  // Eight opens of copy 0 at once, from separate transactions.
  await Promise.all(Array.from({ length: 8 }, () => recordEmailEvents(db, [rec(t.id, s, 0, 'MAIL_OPENED')])));
  expect(await totals(t.id)).toMatchObject({ opened: 8, unique_opened: 1, clicked: 0, unique_clicked: 0 });

  // One batch: two opens and two clicks of copy 1, a click and an unsubscribe of copy 0.
  await recordEmailEventBatch(
    db,
    [
      rec(t.id, s, 1, 'MAIL_OPENED'),
      rec(t.id, s, 1, 'MAIL_CLICKED'),
      rec(t.id, s, 1, 'MAIL_OPENED'),
      rec(t.id, s, 0, 'MAIL_CLICKED'),
      rec(t.id, s, 1, 'MAIL_CLICKED'),
      rec(t.id, s, 0, 'MAIL_UNSUBSCRIBED'),
    ],
    { eventsPerMessage: 10 },
  );
  expect(await totals(t.id)).toEqual(
    only({ requested: 2, opened: 10, unique_opened: 2, clicked: 3, unique_clicked: 2, unsubscribed: 1 }),
  );
  const flags = await db.query<{ opened: boolean; clicked: boolean }>(
    'SELECT opened, clicked FROM email_logs WHERE ref_id = $1 ORDER BY copy_id',
    [s.refId],
  );
  expect(flags.rows).toEqual([
    { opened: true, clicked: true },
    { opened: true, clicked: true },
  ]);
  // Later hits are counted, never again as unique.
  await recordEmailEvents(db, [rec(t.id, s, 1, 'MAIL_CLICKED'), rec(t.id, s, 0, 'MAIL_OPENED')]);
  expect(await totals(t.id)).toMatchObject({ opened: 11, unique_opened: 2, clicked: 4, unique_clicked: 2 });
});

it('puts each event in the UTC hour of its event_at, summed per day', async () => {
  const t = await createTenant(db, { name: 'stats-d', tier: 'standard' });
  const s = await accept(t.id, { from: 'news@delta.example', mailerId: 'm1', to: ['a@x.test'] });
  await recordEmailEvents(db, [rec(t.id, s, 0, 'MAIL_DELIVERED', { attempt: 1 })]);
  const { rows } = await db.query<{ at: string }>(
    `SELECT to_char(event_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24') AS at FROM email_events WHERE ref_id = $1`,
    [s.refId],
  );
  const hour = Date.parse(`${rows[0]!.at}:00:00Z`);
  const hours = await stats.buckets(db, {
    tenantId: t.id,
    granularity: 'hour',
    from: hour,
    to: hour + 3_600_000,
  });
  expect([...hours.keys()]).toEqual([hour]);
  expect(hours.get(hour)!.delivered).toBe(1);
  const day = Math.floor(hour / DAY) * DAY;
  const days = await stats.buckets(db, { tenantId: t.id, granularity: 'day', from: day, to: day + DAY });
  expect([...days.keys()]).toEqual([day]);
  expect(days.get(day)).toMatchObject({ delivered: 1 });
});

it("counts an event with a provider's own time in that time's hour and day", async () => {
  const t = await createTenant(db, { name: 'stats-e', tier: 'standard' });
  const s = await accept(t.id, { from: 'news@epsilon.example', mailerId: 'm1', to: ['a@x.test'] });
  const hour = Math.floor(Date.now() / 3_600_000) * 3_600_000 - 30 * 3_600_000;
  await recordEmailEvents(db, [{ ...rec(t.id, s, 0, 'MAIL_BOUNCE'), eventAt: new Date(hour + 1234) }]);
  const hours = await stats.buckets(db, {
    tenantId: t.id,
    granularity: 'hour',
    from: hour,
    to: hour + 3_600_000,
  });
  expect([...hours.entries()]).toEqual([[hour, only({ bounced: 1 })]]);
  const day = Math.floor(hour / DAY) * DAY;
  const days = await stats.buckets(db, { tenantId: t.id, granularity: 'day', from: day, to: day + DAY });
  expect(days.get(day)).toMatchObject({ bounced: 1 });
});
