/**
 * The dispatcher's claim on real PostgreSQL: every row comes back with its target as configured
 * at claim time (tenant webhook, incoming domain, mailer's incoming webhook; null once gone),
 * a claimed row is leased (not claimed again until released or recorded), per-target limits
 * hold, and a retrying row's lease is cleared by its record.
 */
import { IdPrefix, newId } from '@mailyard/contracts';
import type { Db } from '@mailyard/platform';
import { useMigratedDatabase } from '@mailyard/testkit/migrated-database';
import {
  type DeliveryTargetKind,
  claimDueDeliveries,
  createTenant,
  insertDeliveries,
  recordDeliveryAttempts,
  releaseClaimedDeliveries,
  webhooks,
} from '../src';

const database = useMigratedDatabase();
let db: Db;

beforeAll(() => {
  db = database.db();
});

const claim = (perTarget = 10) =>
  claimDueDeliveries(db, { limit: 100, leaseMs: 60_000, perTarget, running: new Map() });
const add = (tenantId: string, targetKind: DeliveryTargetKind, webhookId: string, n = 1) =>
  insertDeliveries(
    db,
    Array.from({ length: n }, () => ({ tenantId, targetKind, webhookId, eventTypes: ['X'], body: '{}' })),
  );

it('returns each row with its target as configured now, null once the target is gone', async () => {
  const t = await createTenant(db, { name: 'targets', tier: 'enterprise' });
  const hookId = newId(IdPrefix.emailEventsWebhook);
  await webhooks.create(db, t.id, {
    id: hookId,
    event: 'EMAIL_EVENT',
    url: 'https://hooks.example/a',
    events: null as never,
    headerNames: ['X-A'],
    headersSealed: Buffer.from('sealed-headers'),
    secretSealed: Buffer.from('sealed-secret'),
  });
  await db.query(
    `INSERT INTO inbound_domains (tenant_id, domain, url, method, headers_sealed)
     VALUES ($1, 'in.example', 'https://hooks.example/in', 'PUT', NULL)`,
    [t.id],
  );
  await db.query(
    `INSERT INTO mailers (id, tenant_id, config_type, connection_type, name, incoming_webhook, incoming_webhook_secret)
     VALUES ('imap_1', $1, 'imap', 'basic', 'm', '{"url": "https://hooks.example/m", "method": "POST"}', 'mh')`,
    [t.id],
  );
  await add(t.id, 'webhook', hookId);
  await add(t.id, 'inbound', 'in.example');
  await add(t.id, 'mailer', 'imap_1');
  const rows = await claim();
  const byKind = Object.fromEntries(rows.map((r) => [r.targetKind, r.target]));
  expect(byKind.webhook).toEqual({
    url: 'https://hooks.example/a',
    method: 'POST',
    active: true,
    headersSealed: Buffer.from('sealed-headers'),
    secretSealed: Buffer.from('sealed-secret'),
  });
  expect(byKind.inbound).toEqual({
    url: 'https://hooks.example/in',
    method: 'PUT',
    active: true,
    headersSealed: null,
    secretSealed: null,
  });
  expect(byKind.mailer).toEqual({
    url: 'https://hooks.example/m',
    method: 'POST',
    active: true,
    headersSealed: Buffer.from('mh'),
    secretSealed: null,
  });
  // Leased: nothing more to claim until released.
  expect(await claim()).toEqual([]);

  // Changed and removed meanwhile: the next claim reads them as they are now.
  await db.query("UPDATE webhooks SET url = 'https://hooks.example/b', active = false WHERE id = $1", [
    hookId,
  ]);
  await db.query("DELETE FROM inbound_domains WHERE domain = 'in.example'");
  await db.query("UPDATE mailers SET deleted_at = now() WHERE id = 'imap_1'");
  await releaseClaimedDeliveries(
    db,
    rows.map((r) => r.id),
  );
  const again = Object.fromEntries((await claim()).map((r) => [r.targetKind, r.target]));
  expect(again.webhook).toMatchObject({ url: 'https://hooks.example/b', active: false });
  expect(again.inbound).toBeNull();
  expect(again.mailer).toBeNull();
});

it('takes at most perTarget of an endpoint; a retry recorded with a due time clears the lease', async () => {
  const t = await createTenant(db, { name: 'limits', tier: 'enterprise' });
  await add(t.id, 'inbound', 'limits.example', 5);
  const first = await claim(2);
  expect(first).toHaveLength(2);
  expect((await claim(3)).length).toBe(3);
  await recordDeliveryAttempts(db, [
    {
      deliveryId: first[0]!.id,
      attempt: 1,
      outcome: {
        at: new Date(),
        statusCode: 500,
        latencyMs: 1,
        error: 'HTTP 500',
        next: { status: 'retrying', nextAttemptAt: new Date(Date.now() - 1000) },
      },
    },
  ]);
  const retry = await claim();
  expect(retry.map((r) => [r.id, r.attempts])).toEqual([[first[0]!.id, 1]]);
});
