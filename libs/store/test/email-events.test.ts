/**
 * recordEmailEvents on real PostgreSQL: the event row, the log status moving only forward and
 * the outbox row commit together; every repeated open is its own event with a distinct,
 * strictly increasing microsecond event_at, even when written concurrently.
 */
import { type EmailEvent, emptyTracking, ulid } from '@mailyard/contracts';
import type { Db } from '@mailyard/platform';
import { useMigratedDatabase } from '@mailyard/testkit/migrated-database';
import {
  createTenant,
  findCopyRecipients,
  findLogRecipient,
  findTrackedRecipient,
  recordEmailEventBatch,
  recordEmailEvents,
} from '../src';

const database = useMigratedDatabase();
let db: Db;

beforeAll(() => {
  db = database.db();
});

async function seedSend(tenantId: string, recipients: string[]) {
  const refId = ulid();
  const copyId = `${refId}.1`;
  await db.query(
    `INSERT INTO sends (ref_id, tenant_id, mailer_id, custom_args, request) VALUES ($1, $2, 'm1', '{"c":1}', '{}')`,
    [refId, tenantId],
  );
  const logIds: string[] = [];
  for (const r of recipients) {
    const id = ulid();
    logIds.push(id);
    await db.query(
      `INSERT INTO email_logs (id, ref_id, tenant_id, copy_id, recipient, recipient_domain, recipient_type, status, mailer_id, message_id)
       VALUES ($1, $2, $3, $4, $5, 'example.com', 'to', 'MAIL_DELIVERED', 'm1', '<m@x>')`,
      [id, refId, tenantId, copyId, r],
    );
  }
  // The send service's own event for attempt 1 of the copy.
  await db.query(
    `INSERT INTO email_events (tenant_id, ref_id, copy_id, event, attempt, event_at, payload)
     VALUES ($1, $2, $3, 'MAIL_DELIVERED', 1, now(), '{}')`,
    [tenantId, refId, copyId],
  );
  return { refId, copyId, logIds };
}

function event(name: EmailEvent['event'], refId: string, email: string): EmailEvent {
  return {
    event: name,
    success: true,
    details: {
      ref_id: refId,
      mailer_id: 'm1',
      email: [email],
      custom_args: null,
      message_id: '<m@x>',
      thread_id: '',
      webhook_id: '',
      event_at: new Date().toISOString(),
      tracking: { ...emptyTracking(), ip: '192.0.2.1' },
      failed_reason: '',
    },
  };
}

const status = async (logId: string) =>
  (
    await db.query<{ status: string; last_event: string }>(
      'SELECT status, last_event FROM email_logs WHERE id = $1',
      [logId],
    )
  ).rows[0];

it('writes the event, advances the log and publishes through the outbox, with one stamp', async () => {
  const tenant = await createTenant(db, { name: 'a', tier: 'standard' });
  const s = await seedSend(tenant.id, ['a@example.com']);
  const [recorded] = await recordEmailEvents(db, [
    {
      tenantId: tenant.id,
      copyId: s.copyId,
      recipients: [{ logId: s.logIds[0]!, email: 'a@example.com' }],
      event: event('MAIL_OPENED', s.refId, 'a@example.com'),
    },
  ]);
  expect(recorded!.details.event_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  expect(await status(s.logIds[0]!)).toEqual({ status: 'MAIL_OPENED', last_event: 'MAIL_OPENED' });
  const ev = await db.query<{ attempt: number; payload: EmailEvent }>(
    "SELECT attempt, payload FROM email_events WHERE ref_id = $1 AND event = 'MAIL_OPENED'",
    [s.refId],
  );
  expect(ev.rows).toEqual([{ attempt: 0, payload: recorded }]);
  const ob = await db.query<{ routing_key: string; message: { payload: EmailEvent; tenant_id: string } }>(
    `SELECT routing_key, message FROM outbox WHERE message->'payload'->'details'->>'ref_id' = $1`,
    [s.refId],
  );
  expect(ob.rows).toHaveLength(1);
  expect(ob.rows[0]!.routing_key).toBe('email.mail_opened');
  expect(ob.rows[0]!.message.payload).toEqual(recorded);
  expect(ob.rows[0]!.message.tenant_id).toBe(tenant.id);
});

it('records every repeated open, concurrently, with distinct increasing event_at', async () => {
  const tenant = await createTenant(db, { name: 'b', tier: 'standard' });
  const s = await seedSend(tenant.id, ['a@example.com', 'b@example.com']);
  const writes = Array.from({ length: 8 }, (_, i) =>
    recordEmailEvents(db, [
      {
        tenantId: tenant.id,
        copyId: s.copyId,
        recipients: [{ logId: s.logIds[i % 2]!, email: i % 2 ? 'b@example.com' : 'a@example.com' }],
        event: event('MAIL_OPENED', s.refId, i % 2 ? 'b@example.com' : 'a@example.com'),
      },
    ]),
  );
  const recorded = (await Promise.all(writes)).flat();
  expect(recorded).toHaveLength(8);
  const { rows } = await db.query<{ attempt: number; at: string }>(
    `SELECT attempt, payload->'details'->>'event_at' AS at FROM email_events
      WHERE ref_id = $1 AND event = 'MAIL_OPENED' ORDER BY event_at`,
    [s.refId],
  );
  expect(rows).toHaveLength(8);
  expect(new Set(rows.map((r) => r.at)).size).toBe(8);
  expect(rows.map((r) => r.attempt)).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
  const ats = rows.map((r) => r.at);
  expect([...ats].sort()).toEqual(ats);
});

it("never moves a status backwards and ignores another tenant's rows", async () => {
  const tenant = await createTenant(db, { name: 'c', tier: 'standard' });
  const other = await createTenant(db, { name: 'd', tier: 'standard' });
  const s = await seedSend(tenant.id, ['a@example.com']);
  const logId = s.logIds[0]!;
  const rec = (name: EmailEvent['event'], tenantId = tenant.id) =>
    recordEmailEvents(db, [
      {
        tenantId,
        copyId: s.copyId,
        recipients: [{ logId, email: 'a@example.com' }],
        event: event(name, s.refId, 'a@example.com'),
      },
    ]);
  await rec('MAIL_CLICKED');
  expect(await status(logId)).toEqual({ status: 'MAIL_CLICKED', last_event: 'MAIL_CLICKED' });
  await rec('MAIL_OPENED');
  expect(await status(logId)).toEqual({ status: 'MAIL_CLICKED', last_event: 'MAIL_CLICKED' });
  await rec('MAIL_UNSUBSCRIBED', other.id);
  expect(await status(logId)).toEqual({ status: 'MAIL_CLICKED', last_event: 'MAIL_CLICKED' });
  await rec('MAIL_UNSUBSCRIBED');
  expect(await status(logId)).toEqual({ status: 'MAIL_UNSUBSCRIBED', last_event: 'MAIL_UNSUBSCRIBED' });

  expect(await findTrackedRecipient(db, other.id, s.refId, logId)).toBeNull();
  expect(await findTrackedRecipient(db, tenant.id, s.refId, logId)).toMatchObject({
    copyId: s.copyId,
    email: 'a@example.com',
    mailerId: 'm1',
    messageId: '<m@x>',
    threadId: '',
    customArgs: { c: 1 },
  });
});

it('keeps the thread of a delivery with the copy; every loader of later events reads it back', async () => {
  const tenant = await createTenant(db, { name: 'thread', tier: 'standard' });
  const s = await seedSend(tenant.id, ['a@example.com', 'b@example.com']);
  const [a, b] = s.logIds as [string, string];
  const delivered = (logId: string, email: string, threadId: string, attempt: number) => {
    const e = sendEvent('MAIL_DELIVERED', s.refId, email);
    e.details.thread_id = threadId;
    return recordEmailEvents(db, [
      { tenantId: tenant.id, copyId: s.copyId, recipients: [{ logId, email }], event: e, attempt },
    ]);
  };
  // A Gmail/Graph delivery names its thread; an SMTP one has none.
  expect(await delivered(a, 'a@example.com', '18c2f0a9d7e3b1c4', 2)).toHaveLength(1);
  expect(await delivered(b, 'b@example.com', '', 2)).toHaveLength(1);
  // A later event of the copy never clears it.
  await recordEmailEvents(db, [
    {
      tenantId: tenant.id,
      copyId: s.copyId,
      recipients: [{ logId: a, email: 'a@example.com' }],
      event: event('MAIL_OPENED', s.refId, 'a@example.com'),
    },
  ]);
  expect((await findTrackedRecipient(db, tenant.id, s.refId, a))!.threadId).toBe('18c2f0a9d7e3b1c4');
  expect((await findTrackedRecipient(db, tenant.id, s.refId, b))!.threadId).toBe('');
  expect((await findLogRecipient(db, a))!.threadId).toBe('18c2f0a9d7e3b1c4');
  expect((await findCopyRecipients(db, s.copyId)).map((r) => [r.email, r.threadId]).sort()).toEqual([
    ['a@example.com', '18c2f0a9d7e3b1c4'],
    ['b@example.com', ''],
  ]);
});

function sendEvent(
  name: 'MAIL_DELIVERED' | 'SMTP_ERROR',
  refId: string,
  email: string,
  retry?: boolean,
): EmailEvent {
  const e = event(name, refId, email);
  e.success = name === 'MAIL_DELIVERED';
  e.details.tracking = emptyTracking();
  if (name === 'SMTP_ERROR')
    Object.assign(e.details, { attempt: 1, max_attempts: 3, retry_scheduled: retry });
  return e;
}

it('stamps send events of one batch with distinct event_at and keys them per copy, recipients and attempt', async () => {
  const tenant = await createTenant(db, { name: 'e', tier: 'standard' });
  const emails = ['a@x.test', 'b@x.test', 'c@x.test', 'd@x.test', 'e@x.test', 'f@x.test'];
  const s = await seedSend(tenant.id, emails);
  await db.query("UPDATE email_logs SET status = 'QUEUED' WHERE ref_id = $1", [s.refId]);
  // Six deliveries of one send (with substitutions: one copy each), written in ONE batch.
  const records = emails.slice(0, 5).map((email, i) => ({
    tenantId: tenant.id,
    copyId: `${s.refId}.${i + 1}`,
    recipients: [{ logId: s.logIds[i]!, email }],
    event: sendEvent('MAIL_DELIVERED', s.refId, email),
    attempt: 1,
  }));
  const recorded = await recordEmailEventBatch(db, records);
  expect(recorded.every((e) => e !== null)).toBe(true);
  const stamps = recorded.map((e) => e!.details.event_at);
  expect(new Set(stamps).size).toBe(5);
  expect([...stamps].sort()).toEqual(stamps);

  // A 451 + 550 attempt of one copy: one SMTP_ERROR per recipient per attempt, both under the
  // SAME copy id (no split copy), with distinct stamps.
  const copy = `${s.refId}.9`;
  await db.query('UPDATE email_logs SET copy_id = $2 WHERE id = ANY($1::text[])', [
    [s.logIds[4], s.logIds[5]],
    copy,
  ]);
  await db.query("UPDATE email_logs SET send_outcome = NULL, status = 'QUEUED' WHERE id = $1", [s.logIds[4]]);
  const attempt = [
    {
      tenantId: tenant.id,
      copyId: copy,
      recipients: [{ logId: s.logIds[4]!, email: 'e@x.test' }],
      event: sendEvent('SMTP_ERROR', s.refId, 'e@x.test', true),
      attempt: 1,
    },
    {
      tenantId: tenant.id,
      copyId: copy,
      recipients: [{ logId: s.logIds[5]!, email: 'f@x.test' }],
      event: sendEvent('SMTP_ERROR', s.refId, 'f@x.test', false),
      attempt: 1,
    },
  ];
  const errors = await recordEmailEventBatch(db, attempt);
  expect(errors.map((e) => e?.details.email)).toEqual([['e@x.test'], ['f@x.test']]);
  expect(errors[0]!.details.event_at).not.toBe(errors[1]!.details.event_at);
  // Redelivered: the same attempt records nothing again (and publishes nothing).
  expect(await recordEmailEventBatch(db, attempt)).toEqual([null, null]);
  const { rows } = await db.query<{ copy_id: string; n: number }>(
    `SELECT copy_id, count(*)::int AS n FROM email_events WHERE ref_id = $1 AND event = 'SMTP_ERROR' GROUP BY copy_id`,
    [s.refId],
  );
  expect(rows).toEqual([{ copy_id: copy, n: 2 }]);
  const logs = await db.query<{ copy_id: string }>(
    'SELECT DISTINCT copy_id FROM email_logs WHERE id = ANY($1::text[])',
    [[s.logIds[4], s.logIds[5]]],
  );
  expect(logs.rows).toEqual([{ copy_id: copy }]);
  const ob = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM outbox WHERE message->'payload'->'details'->>'ref_id' = $1 AND routing_key = 'email.smtp_error'`,
    [s.refId],
  );
  expect(ob.rows[0]!.n).toBe(2);
});
