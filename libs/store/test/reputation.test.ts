/**
 * Reputation and automatic pause on real PostgreSQL, through the single event writer: the window
 * counts each copy sent once and each invalid-recipient bounce or complaint once (a repeated or
 * redelivered one counts nothing more); a `reputation` bounce does not count; a scope pauses once,
 * above a threshold and from PAUSE_MIN_VOLUME on, with one SENDING_PAUSED outbox row; the window
 * slides; a resume marks the window so old bounces do not pause it again. Small settings.
 */
import type { BounceCategory, EmailEvent, ReputationSettings } from '@mailyard/contracts';
import type { Db } from '@mailyard/platform';
import { type CopyLog, insertCopies } from '@mailyard/testkit/fixtures';
import { useMigratedDatabase } from '@mailyard/testkit/migrated-database';
import { emailEvent } from '@mailyard/testkit/webhooks';
import {
  type EmailEventRecord,
  createTenant,
  openPause,
  readWindow,
  recordEmailEventBatch,
  resumeSending,
} from '../src';

const database = useMigratedDatabase();
let db: Db;
beforeAll(() => {
  db = database.db();
});

const settings: ReputationSettings = { window: 20, bounceRate: 0.05, complaintRate: 0.001, minVolume: 10 };

type Log = CopyLog;

const accept = (tenantId: string, from: string, mailerId: string, n: number): Promise<Log[]> =>
  insertCopies(db, { tenantId, mailerId, from, n });

function record(
  tenantId: string,
  log: Log,
  name: EmailEvent['event'],
  o: { attempt?: number; retry?: boolean; category?: BounceCategory } = {},
): EmailEventRecord {
  const event = emailEvent(name, new Date().toISOString(), {
    ref_id: log.refId,
    mailer_id: 'm',
    email: [log.email],
    custom_args: null,
    ...(o.category ? { bounce_category: o.category } : {}),
    ...(name === 'SMTP_ERROR' ? { attempt: 1, max_attempts: 3, retry_scheduled: o.retry ?? false } : {}),
  });
  return {
    tenantId,
    copyId: log.copyId,
    recipients: [{ logId: log.id, email: log.email }],
    event,
    ...(o.attempt === undefined ? {} : { attempt: o.attempt }),
  };
}

const deliver = (tenantId: string, logs: Log[]) =>
  recordEmailEventBatch(
    db,
    logs.map((l) => record(tenantId, l, 'MAIL_DELIVERED', { attempt: 1 })),
    { reputation: settings },
  );
const bounce = (tenantId: string, l: Log, category: BounceCategory = 'invalid_recipient') =>
  recordEmailEventBatch(db, [record(tenantId, l, 'MAIL_BOUNCE', { category })], { reputation: settings });
const complain = (tenantId: string, l: Log) =>
  recordEmailEventBatch(db, [record(tenantId, l, 'MAIL_SPAM')], { reputation: settings });

async function pausedEvents(tenantId: string): Promise<Array<{ details: Record<string, unknown> }>> {
  const { rows } = await db.query<{ payload: { payload: { details: Record<string, unknown> } } }>(
    `SELECT message AS payload FROM outbox WHERE routing_key = 'sending.paused' AND message->>'tenant_id' = $1 ORDER BY id`,
    [tenantId],
  );
  return rows.map((r) => r.payload.payload);
}

it('pauses the domain once above the bounce rate, with one SENDING_PAUSED (its mailer not too)', async () => {
  const t = await createTenant(db, { name: 'rep-a', tier: 'standard' });
  const logs = await accept(t.id, 'news@Rep-A.example', 'ma', 20);
  await deliver(t.id, logs);
  await bounce(t.id, logs[0]!);
  // 1/20 = 5 %: not above.
  expect(await openPause(db, t.id, 'domain', 'rep-a.example')).toBeNull();
  // The same bounce again (a second DSN for the copy): the copy counts once.
  await bounce(t.id, logs[0]!);
  expect(await readWindow(db, t.id, 'domain', 'rep-a.example', 20)).toEqual({
    sent: 20,
    invalidRecipientBounces: 1,
    complaints: 0,
  });
  expect(await openPause(db, t.id, 'domain', 'rep-a.example')).toBeNull();
  await bounce(t.id, logs[1]!);
  const domain = await openPause(db, t.id, 'domain', 'rep-a.example');
  expect(domain).toMatchObject({
    metric: 'invalid_recipient_bounce_rate',
    rate: 0.1,
    window: 20,
    threshold: 0.05,
  });
  // The domain pause stops this traffic: its mailer is not paused for the same bounces.
  expect(await openPause(db, t.id, 'mailer', 'ma')).toBeNull();
  // More bounces while paused: no second pause, no second event.
  await bounce(t.id, logs[2]!);
  await bounce(t.id, logs[3]!);
  const events = await pausedEvents(t.id);
  expect(events.map((e) => e.details.scope)).toEqual(['domain']);
  expect(events.find((e) => e.details.scope === 'domain')).toMatchObject({
    event: 'SENDING_PAUSED',
    success: false,
    details: {
      domain: 'rep-a.example',
      metric: 'invalid_recipient_bounce_rate',
      rate: 0.1,
      window: 20,
      threshold: 0.05,
    },
  });

  // Resume: closed, and the old bounces (copies sent before the mark) no longer count.
  expect(await resumeSending(db, t.id, 'domain', 'rep-a.example', 20)).toBe(true);
  expect(await resumeSending(db, t.id, 'domain', 'rep-a.example', 20)).toBe(false);
  await bounce(t.id, logs[4]!);
  expect(await openPause(db, t.id, 'domain', 'rep-a.example')).toBeNull();
  // Nor does the mailer pause on them (they were cleared for every scope).
  expect(await openPause(db, t.id, 'mailer', 'ma')).toBeNull();
  expect(await readWindow(db, t.id, 'mailer', 'ma', 20)).toMatchObject({ sent: 0 });
  expect(await readWindow(db, t.id, 'domain', 'rep-a.example', 20)).toEqual({
    sent: 0,
    invalidRecipientBounces: 0,
    complaints: 0,
  });
  expect(await pausedEvents(t.id)).toHaveLength(1);
});

it('pauses a mailer whose mail goes bad across From domains none of which reaches the volume', async () => {
  const t = await createTenant(db, { name: 'rep-e', tier: 'standard' });
  const logs: Log[] = [];
  for (let i = 0; i < 10; i++) logs.push(...(await accept(t.id, `a@d${i}.rep-e.example`, 'me', 1)));
  await deliver(t.id, logs);
  await bounce(t.id, logs[3]!);
  expect(await openPause(db, t.id, 'mailer', 'me')).toMatchObject({
    metric: 'invalid_recipient_bounce_rate',
    rate: 0.1,
    window: 10,
  });
  expect(await openPause(db, t.id, 'domain', 'd3.rep-e.example')).toBeNull();
  expect((await pausedEvents(t.id)).map((e) => e.details)).toEqual([
    expect.objectContaining({ scope: 'mailer', mailer_id: 'me', domain: 'd3.rep-e.example', window: 10 }),
  ]);
});

it('counts a final 5xx of an invalid recipient at send; never pauses below PAUSE_MIN_VOLUME', async () => {
  const t = await createTenant(db, { name: 'rep-b', tier: 'standard' });
  const logs = await accept(t.id, 'a@rep-b.example', 'mb', 9);
  await recordEmailEventBatch(
    db,
    logs.map((l) =>
      record(t.id, l, 'SMTP_ERROR', { attempt: 1, retry: false, category: 'invalid_recipient' }),
    ),
    { reputation: settings },
  );
  expect(await readWindow(db, t.id, 'domain', 'rep-b.example', 20)).toEqual({
    sent: 9,
    invalidRecipientBounces: 9,
    complaints: 0,
  });
  expect(await openPause(db, t.id, 'domain', 'rep-b.example')).toBeNull();
  expect(await pausedEvents(t.id)).toEqual([]);
  // The tenth copy (a retry-scheduled error first, which counts nothing) reaches the volume.
  const [tenth] = await accept(t.id, 'a@rep-b.example', 'mb', 1);
  await recordEmailEventBatch(
    db,
    [record(t.id, tenth!, 'SMTP_ERROR', { attempt: 1, retry: true, category: 'invalid_recipient' })],
    {
      reputation: settings,
    },
  );
  expect(await openPause(db, t.id, 'domain', 'rep-b.example')).toBeNull();
  await recordEmailEventBatch(
    db,
    [record(t.id, tenth!, 'SMTP_ERROR', { attempt: 2, retry: false, category: 'invalid_recipient' })],
    {
      reputation: settings,
    },
  );
  expect(await openPause(db, t.id, 'domain', 'rep-b.example')).toMatchObject({ rate: 1, window: 10 });
});

it('does not count reputation bounces; pauses on the complaint rate', async () => {
  const t = await createTenant(db, { name: 'rep-c', tier: 'standard' });
  const logs = await accept(t.id, 'a@rep-c.example', 'mc', 10);
  await deliver(t.id, logs);
  for (const l of logs.slice(0, 5)) await bounce(t.id, l, 'reputation');
  expect((await readWindow(db, t.id, 'domain', 'rep-c.example', 20)).invalidRecipientBounces).toBe(0);
  expect(await openPause(db, t.id, 'domain', 'rep-c.example')).toBeNull();
  await complain(t.id, logs[9]!);
  expect(await openPause(db, t.id, 'domain', 'rep-c.example')).toMatchObject({
    metric: 'complaint_rate',
    rate: 0.1,
    threshold: 0.001,
  });
});

it('slides: bounces of copies older than the last REPUTATION_WINDOW sent no longer count', async () => {
  const t = await createTenant(db, { name: 'rep-d', tier: 'standard' });
  const old = await accept(t.id, 'a@rep-d.example', 'md', 2);
  await deliver(t.id, old);
  await bounce(t.id, old[0]!);
  await bounce(t.id, old[1]!);
  const recent = await accept(t.id, 'a@rep-d.example', 'md', 20);
  await deliver(t.id, recent);
  await bounce(t.id, recent[0]!);
  // All time: 3/22 = 13.6 %; the window (last 20): 1/20 = 5 %, not above.
  expect(await readWindow(db, t.id, 'domain', 'rep-d.example', 20)).toEqual({
    sent: 20,
    invalidRecipientBounces: 1,
    complaints: 0,
  });
  expect(await openPause(db, t.id, 'domain', 'rep-d.example')).toBeNull();
  expect(await openPause(db, t.id, 'mailer', 'md')).toBeNull();
});
