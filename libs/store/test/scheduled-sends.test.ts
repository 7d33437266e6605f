/**
 * scheduled-sends.ts on real PostgreSQL: a held send is SCHEDULED with no outbox row; releaseDue
 * moves only due sends (outbox rows written, logs QUEUED); cancel answers not found / nothing
 * left / cancelled; cancel and release racing on the same due send never both win (and never
 * neither); held and cancelled copies are not "unfinished" for the embedded recovery, and the
 * event writer records nothing for a cancelled recipient.
 */
import {
  Exchange,
  RoutingKey,
  SEND_EMAIL_COMMAND,
  SEND_EMAIL_COMMAND_VERSION,
  commandOfOneCopy,
  ulid,
} from '@mailyard/contracts';
import { type Db, type OutboxRow, envelope } from '@mailyard/platform';
import { bareSendRow } from '@mailyard/testkit/fixtures';
import { useMigratedDatabase } from '@mailyard/testkit/migrated-database';
import { createTenant, findUnfinishedCopies, lockUnfinishedLogRows, scheduledSends, sends } from '../src';

const database = useMigratedDatabase();
let db: Db;

let TENANT: string;

beforeAll(async () => {
  db = database.db();
  TENANT = (await createTenant(db, { name: 'scheduled', tier: 'standard' })).id;
});

/** A send of `recipients` (one copy) held until `sendAt`, as the gateway writes it. */
async function holdSend(sendAt: Date, recipients = ['a@example.com'], tenantId = TENANT) {
  const refId = ulid();
  const copyId = `${refId}.1`;
  const command: OutboxRow = {
    exchange: Exchange.commands,
    routingKey: RoutingKey.sendEmail,
    envelope: envelope(
      SEND_EMAIL_COMMAND,
      commandOfOneCopy({ ref_id: refId, tenant_id: tenantId, copy_id: copyId, attempt: 1 }),
      { tenantId, version: SEND_EMAIL_COMMAND_VERSION },
    ),
  };
  await db.transaction(async (tx) => {
    await sends.insertAccepted(
      tx,
      bareSendRow(refId, tenantId),
      recipients.map((r) => ({ copyId, recipient: r, recipientDomain: 'example.com', recipientType: 'to' })),
      [],
    );
    await scheduledSends.hold(tx, tenantId, refId, sendAt, [command]);
  });
  return { refId, copyId };
}

const statuses = async (refId: string) =>
  (
    await db.query<{ status: string; send_outcome: string | null }>(
      'SELECT status, send_outcome FROM email_logs WHERE ref_id = $1 ORDER BY id',
      [refId],
    )
  ).rows;

const outboxFor = async (refId: string) =>
  (
    await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM outbox WHERE message->'payload'->'sends'->0->>'ref_id' = $1`,
      [refId],
    )
  ).rows[0]!.n;

const later = (ms: number) => new Date(Date.now() + ms);

it('holds a send SCHEDULED without outbox rows until it is due, then releases it', async () => {
  const future = await holdSend(later(3_600_000), ['a@example.com', 'b@example.com']);
  const due = await holdSend(later(-1000));
  expect(await statuses(future.refId)).toEqual([
    { status: 'SCHEDULED', send_outcome: null },
    { status: 'SCHEDULED', send_outcome: null },
  ]);
  expect(await outboxFor(future.refId)).toBe(0);
  expect(await scheduledSends.msUntilNextDue(db)).toBe(0);

  expect(await scheduledSends.releaseDue(db, 100)).toBe(1);
  expect(await statuses(due.refId)).toEqual([{ status: 'QUEUED', send_outcome: null }]);
  expect(await outboxFor(due.refId)).toBe(1);
  expect(await statuses(future.refId)).toEqual([
    { status: 'SCHEDULED', send_outcome: null },
    { status: 'SCHEDULED', send_outcome: null },
  ]);
  expect(await scheduledSends.releaseDue(db, 100)).toBe(0);
  const next = await scheduledSends.msUntilNextDue(db);
  expect(next).toBeGreaterThan(3_500_000);
  expect(next).toBeLessThanOrEqual(3_600_000);

  // Held copies are not lost work for the embedded recovery: their release commands them.
  const unfinished = await findUnfinishedCopies(db);
  expect(unfinished.map((c) => c.ref_id)).not.toContain(future.refId);
  expect(unfinished.map((c) => c.ref_id)).toContain(due.refId);
  await db.query('DELETE FROM scheduled_sends');
});

it('cancels a held send: not found, cancelled, then nothing left; another tenant reads as not found', async () => {
  const held = await holdSend(later(3_600_000), ['a@example.com', 'b@example.com']);
  expect(await scheduledSends.cancel(db, TENANT, ulid())).toEqual({ found: false });
  expect(await scheduledSends.cancel(db, 'tenant_other', held.refId)).toEqual({ found: false });
  expect(await scheduledSends.cancel(db, TENANT, held.refId)).toEqual({ found: true, cancelled: 2 });
  expect(await statuses(held.refId)).toEqual([
    { status: 'CANCELLED', send_outcome: 'CANCELLED' },
    { status: 'CANCELLED', send_outcome: 'CANCELLED' },
  ]);
  expect(await scheduledSends.cancel(db, TENANT, held.refId)).toEqual({ found: true, cancelled: 0 });
  expect(await scheduledSends.msUntilNextDue(db)).toBeNull();

  // Nothing for the recovery to re-command, nothing for the event writer to record.
  expect((await findUnfinishedCopies(db)).map((c) => c.ref_id)).not.toContain(held.refId);
  const logIds = (await db.query<{ id: string }>('SELECT id FROM email_logs WHERE ref_id = $1', [held.refId]))
    .rows;
  const unfinished = await db.transaction((tx) =>
    lockUnfinishedLogRows(
      tx,
      logIds.map((r) => r.id),
    ),
  );
  expect(unfinished.size).toBe(0);
});

it('a released send cannot be cancelled', async () => {
  const held = await holdSend(later(-1));
  expect(await scheduledSends.releaseDue(db, 100)).toBe(1);
  expect(await scheduledSends.cancel(db, TENANT, held.refId)).toEqual({ found: true, cancelled: 0 });
  expect(await statuses(held.refId)).toEqual([{ status: 'QUEUED', send_outcome: null }]);
});

it('cancel and release racing on due sends: exactly one wins for each', async () => {
  await db.query('DELETE FROM outbox');
  const held = await Promise.all(Array.from({ length: 20 }, () => holdSend(later(-1))));
  const results = await Promise.all([
    ...held.map((h) => scheduledSends.cancel(db, TENANT, h.refId)),
    scheduledSends.releaseDue(db, 7),
    scheduledSends.releaseDue(db, 7),
    scheduledSends.releaseDue(db, 7),
  ]);
  let cancelled = 0;
  for (const [i, h] of held.entries()) {
    const outcome = results[i] as { found: true; cancelled: number };
    const logs = await statuses(h.refId);
    const published = await outboxFor(h.refId);
    if (outcome.cancelled > 0) {
      cancelled++;
      expect(logs).toEqual([{ status: 'CANCELLED', send_outcome: 'CANCELLED' }]);
      expect(published).toBe(0);
    } else {
      expect(logs).toEqual([{ status: 'QUEUED', send_outcome: null }]);
      expect(published).toBe(1);
    }
  }
  const released = (results.slice(held.length) as number[]).reduce((a, b) => a + b, 0);
  expect(released + cancelled).toBe(held.length);
  const left = await db.query('SELECT 1 FROM scheduled_sends');
  expect(left.rows).toHaveLength(0);
});
