/**
 * The event writer's bus messages on real PostgreSQL: with eventsPerMessage above 1 the events a
 * batch records for one tenant and event type share one outbox row (`email.event` version 2)
 * holding exactly the events recorded, stamped as in email_events, each with its own trace;
 * alone, or with the default, an event keeps its own version-1 row.
 */
import {
  type BusEnvelope,
  EMAIL_EVENT_GROUP_VERSION,
  type EmailEvent,
  decodeEmailEventMessage,
  emptyTracking,
  ulid,
} from '@mailyard/contracts';
import { type Db, traceIdOf } from '@mailyard/platform';
import { useMigratedDatabase } from '@mailyard/testkit/migrated-database';
import { type EmailEventRecord, createTenant, recordEmailEventBatch } from '../src';

const database = useMigratedDatabase();
let db: Db;

beforeAll(() => {
  db = database.db();
});

/** A send of `n` copies, one QUEUED recipient each. */
async function seedSend(tenantId: string, n: number) {
  const refId = ulid();
  await db.query(
    `INSERT INTO sends (ref_id, tenant_id, mailer_id, custom_args, request) VALUES ($1, $2, 'm1', NULL, '{}')`,
    [refId, tenantId],
  );
  const copies: Array<{ copyId: string; logId: string; email: string }> = [];
  for (let i = 1; i <= n; i++) {
    const c = { copyId: `${refId}.${i}`, logId: ulid(), email: `r${i}@example.com` };
    await db.query(
      `INSERT INTO email_logs (id, ref_id, tenant_id, copy_id, recipient, recipient_domain, recipient_type, status, mailer_id, message_id)
       VALUES ($1, $2, $3, $4, $5, 'example.com', 'to', 'QUEUED', 'm1', '')`,
      [c.logId, refId, tenantId, c.copyId, c.email],
    );
    copies.push(c);
  }
  return { refId, copies };
}

const trace = (i: number) => `00-${i.toString(16).padStart(32, '0')}-${'1'.repeat(16)}-01`;

function record(
  tenantId: string,
  refId: string,
  c: { copyId: string; logId: string; email: string },
  name: 'MAIL_DELIVERED' | 'SMTP_ERROR',
  traceNo: number,
): EmailEventRecord {
  const event: EmailEvent = {
    event: name,
    success: name === 'MAIL_DELIVERED',
    details: {
      ref_id: refId,
      mailer_id: 'm1',
      email: [c.email],
      custom_args: null,
      message_id: '<m@x>',
      thread_id: '',
      webhook_id: '',
      event_at: new Date().toISOString(),
      tracking: emptyTracking(),
      failed_reason: name === 'SMTP_ERROR' ? 'mailbox full' : '',
      ...(name === 'SMTP_ERROR' ? { attempt: 1, max_attempts: 3, retry_scheduled: false } : {}),
    },
  };
  return {
    tenantId,
    copyId: c.copyId,
    recipients: [{ logId: c.logId, email: c.email }],
    event,
    attempt: 1,
    traceparent: trace(traceNo),
  };
}

async function outboxOf(tenantId: string) {
  const { rows } = await db.query<{ routing_key: string; message: BusEnvelope }>(
    `SELECT routing_key, message FROM outbox WHERE message->>'tenant_id' = $1 ORDER BY id`,
    [tenantId],
  );
  return rows;
}

it('writes one message per tenant and event type, holding the events recorded with their stamps and traces', async () => {
  const a = await createTenant(db, { name: 'group-a', tier: 'standard' });
  const b = await createTenant(db, { name: 'group-b', tier: 'standard' });
  const sa = await seedSend(a.id, 4);
  const sb = await seedSend(b.id, 2);
  // Copy 4 of tenant a already has its outcome: its record is dropped, and is not in the message.
  await db.query("UPDATE email_logs SET send_outcome = 'MAIL_DELIVERED' WHERE id = $1", [
    sa.copies[3]!.logId,
  ]);
  const records = [
    record(a.id, sa.refId, sa.copies[0]!, 'MAIL_DELIVERED', 1),
    record(b.id, sb.refId, sb.copies[0]!, 'MAIL_DELIVERED', 2),
    record(a.id, sa.refId, sa.copies[1]!, 'SMTP_ERROR', 3),
    record(a.id, sa.refId, sa.copies[3]!, 'MAIL_DELIVERED', 4),
    record(a.id, sa.refId, sa.copies[2]!, 'MAIL_DELIVERED', 5),
    record(b.id, sb.refId, sb.copies[1]!, 'MAIL_DELIVERED', 6),
  ];
  const recorded = await recordEmailEventBatch(db, records, { eventsPerMessage: 100 });
  expect(recorded.map((e) => e !== null)).toEqual([true, true, true, false, true, true]);

  const rowsA = await outboxOf(a.id);
  expect(rowsA.map((r) => [r.routing_key, r.message.version])).toEqual([
    ['email.mail_delivered', EMAIL_EVENT_GROUP_VERSION],
    ['email.smtp_error', 1],
  ]);
  const delivered = decodeEmailEventMessage(rowsA[0]!.message.version, rowsA[0]!.message.payload);
  if (!delivered.ok) throw new Error(delivered.error);
  // Exactly what was recorded (stamps included), in recorded order, each with its own trace.
  expect(delivered.events.map((i) => i.event)).toEqual([recorded[0], recorded[4]]);
  expect(delivered.events.map((i) => traceIdOf(i.traceparent!))).toEqual([
    traceIdOf(trace(1)),
    traceIdOf(trace(5)),
  ]);
  expect(traceIdOf(rowsA[0]!.message.traceparent!)).toBe(traceIdOf(trace(1)));
  // A group of one keeps the version-1 shape: the event object itself.
  expect(rowsA[1]!.message.payload).toEqual(recorded[2]);

  const rowsB = await outboxOf(b.id);
  expect(rowsB).toHaveLength(1);
  const forB = decodeEmailEventMessage(rowsB[0]!.message.version, rowsB[0]!.message.payload);
  expect(forB.ok && forB.events.map((i) => i.event)).toEqual([recorded[1], recorded[5]]);
  // The stamps in the messages are those of the email_events rows.
  const { rows: stored } = await db.query<{ at: string }>(
    `SELECT payload->'details'->>'event_at' AS at FROM email_events WHERE ref_id = $1 ORDER BY event_at`,
    [sb.refId],
  );
  expect(stored.map((r) => r.at)).toEqual([recorded[1]!.details.event_at, recorded[5]!.details.event_at]);

  // Redelivered: nothing recorded again, no message written.
  expect(await recordEmailEventBatch(db, records, { eventsPerMessage: 100 })).toEqual(
    records.map(() => null),
  );
  expect(await outboxOf(a.id)).toHaveLength(2);
});

it('splits a group at eventsPerMessage, and writes a message per event by default', async () => {
  const t = await createTenant(db, { name: 'group-c', tier: 'standard' });
  const s = await seedSend(t.id, 8);
  const grouped = s.copies.slice(0, 5).map((c, i) => record(t.id, s.refId, c, 'MAIL_DELIVERED', i + 1));
  await recordEmailEventBatch(db, grouped, { eventsPerMessage: 2 });
  const rows = await outboxOf(t.id);
  expect(rows.map((r) => r.message.version)).toEqual([2, 2, 1]);
  const sizes = rows.map((r) => {
    const d = decodeEmailEventMessage(r.message.version, r.message.payload);
    return d.ok ? d.events.length : -1;
  });
  expect(sizes).toEqual([2, 2, 1]);

  const single = s.copies.slice(5).map((c, i) => record(t.id, s.refId, c, 'MAIL_DELIVERED', i + 10));
  await recordEmailEventBatch(db, single);
  const after = await outboxOf(t.id);
  expect(after.slice(3).map((r) => [r.message.version, r.message.payload])).toEqual(
    single.map(() => [1, expect.objectContaining({ event: 'MAIL_DELIVERED' })]),
  );
});
