/**
 * recordEmailEvents with a provider's own time (`eventAt`, SparkPost callbacks) on real
 * PostgreSQL: the event is stamped at that time; a time already taken for the same ref_id and
 * event moves on by a microsecond (in the same batch and across batches), so ref_id + event +
 * event_at stays unique (docs/architecture.md, reliability 2); events without a time keep being
 * stamped now, after the provider's.
 */
import { type EmailEvent, ulid } from '@mailyard/contracts';
import type { Db } from '@mailyard/platform';
import { useMigratedDatabase } from '@mailyard/testkit/migrated-database';
import { emailEvent } from '@mailyard/testkit/webhooks';
import { type EmailEventRecord, createTenant, recordEmailEventBatch } from '../src';

const database = useMigratedDatabase();
let db: Db;

beforeAll(() => {
  db = database.db();
});

async function seedSend(tenantId: string, recipients: string[]) {
  const refId = ulid();
  const copyId = `${refId}.1`;
  await db.query(
    `INSERT INTO sends (ref_id, tenant_id, mailer_id, custom_args, request) VALUES ($1, $2, 'm1', NULL, '{}')`,
    [refId, tenantId],
  );
  const logIds: string[] = [];
  for (const r of recipients) {
    const id = ulid();
    logIds.push(id);
    await db.query(
      `INSERT INTO email_logs (id, ref_id, tenant_id, copy_id, recipient, recipient_domain, recipient_type, mailer_id)
       VALUES ($1, $2, $3, $4, $5, 'example.com', 'to', 'm1')`,
      [id, refId, tenantId, copyId, r],
    );
  }
  return { refId, copyId, logIds };
}

function bounce(refId: string, email: string): EmailEvent {
  return emailEvent('MAIL_BOUNCE', new Date().toISOString(), {
    ref_id: refId,
    mailer_id: 'm1',
    email: [email],
    custom_args: null,
    failed_reason: 'Invalid Recipient',
  });
}

it('stamps at the provider time, the next free microsecond when it is taken', async () => {
  const tenant = await createTenant(db, { name: 'p', tier: 'standard' });
  const s = await seedSend(tenant.id, ['a@example.com', 'b@example.com', 'c@example.com']);
  const at = new Date('2026-03-01T10:00:00.000Z');
  const record = (i: number, eventAt?: Date): EmailEventRecord => {
    const email = ['a@example.com', 'b@example.com', 'c@example.com'][i]!;
    return {
      tenantId: tenant.id,
      copyId: s.copyId,
      recipients: [{ logId: s.logIds[i]!, email }],
      event: bounce(s.refId, email),
      ...(eventAt ? { eventAt } : {}),
    };
  };
  const first = await recordEmailEventBatch(db, [record(0, at), record(1, at)]);
  expect(first.map((e) => e?.details.event_at)).toEqual([
    '2026-03-01T10:00:00.000000Z',
    '2026-03-01T10:00:00.000001Z',
  ]);
  const again = await recordEmailEventBatch(db, [record(2, at)]);
  expect(again[0]?.details.event_at).toBe('2026-03-01T10:00:00.000002Z');
  const earlier = await recordEmailEventBatch(db, [record(0, new Date('2026-03-01T09:59:59.000Z'))]);
  expect(earlier[0]?.details.event_at).toBe('2026-03-01T09:59:59.000000Z');
  const now = await recordEmailEventBatch(db, [record(1)]);
  expect(Date.parse(now[0]!.details.event_at)).toBeGreaterThan(Date.now() - 60_000);
  const { rows } = await db.query<{ n: number; d: number }>(
    `SELECT count(*) AS n, count(DISTINCT event_at) AS d FROM email_events WHERE ref_id = $1 AND event = 'MAIL_BOUNCE'`,
    [s.refId],
  );
  expect(rows.map((r) => [Number(r.n), Number(r.d)])).toEqual([[5, 5]]);
});
