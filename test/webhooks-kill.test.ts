/**
 * Crash safety of the webhook dispatcher, run as its own process on the real servers and
 * SIGKILLed twice: (1) with a batch of events consumed but not yet stored (held by the account
 * batcher), (2) with deliveries claimed and their requests in flight. After each restart every
 * event reaches the receiver: nothing is lost (duplicates are allowed: at-least-once), and the
 * messages redelivered after (1), single events and groups alike, are stored once each.
 */
import { Queue, WEBHOOK_EVENT_TOGGLES } from '@mailyard/contracts';
import { IdPrefix, newId } from '@mailyard/contracts';
import { type ServiceContext, closeContext, configFrom, createLogger, openContext } from '@mailyard/platform';
import { createTenant, webhooks } from '@mailyard/store';
import { type WebhookReceiver, startWebhookReceiver } from '@mailyard/testkit/peers/webhook-receiver';
import { type Spawned, freePort, spawnTs } from '@mailyard/testkit/process';
import { type SharedStores, createSharedStores } from '@mailyard/testkit/stores';
import {
  at,
  emailEvent,
  eventually,
  publishEmailEvent,
  publishEmailEventGroup,
} from '@mailyard/testkit/webhooks';
import amqp from 'amqplib';

jest.setTimeout(180_000);

let stores: SharedStores;
let receiver: WebhookReceiver;
let ctx: ServiceContext;
let service: Spawned | undefined;

beforeAll(async () => {
  stores = await createSharedStores('servers');
  receiver = await startWebhookReceiver();
  ctx = await openContext(
    configFrom({ ...stores.env, LOG_LEVEL: 'error' }),
    createLogger('kill-test', 'error'),
  );
});

afterAll(async () => {
  service?.child.kill('SIGKILL');
  if (ctx) await closeContext(ctx);
  await receiver?.close();
  await stores?.drop();
});

let opsPort = 0;
async function startService(): Promise<Spawned> {
  opsPort = await freePort();
  const s = spawnTs('services/webhook-dispatcher/src/main.ts', {
    ...stores.env,
    OPS_PORT: String(opsPort),
    LOG_LEVEL: 'error',
    WEBHOOK_ALLOW_INSECURE: '1',
    WEBHOOK_BATCH_MAX: '1000',
    WEBHOOK_BATCH_WAIT_MS: '3000',
    WEBHOOK_TIMEOUT_MS: '1000',
    // The last delay keeps the retry window (~80 s) well beyond the lease (7 s) plus a restart:
    // with 0.2 s throughout the window was 7.2 s, and the delivery reclaimed after its lease was
    // usually dropped as older than the window (a flaky step 3 under load).
    WEBHOOK_RETRY_DELAYS: '0.2,0.2,0.2,0.2,60',
    WEBHOOK_POLL_MS: '100',
  });
  await s.waitFor(/webhook-dispatcher: consuming/, 60_000);
  return s;
}

async function queueDepth(): Promise<{ messageCount: number; consumerCount: number }> {
  const conn = await amqp.connect(String(stores.env.AMQP_URL));
  try {
    const ch = await conn.createChannel();
    return await ch.checkQueue(Queue.webhookDispatcher);
  } finally {
    await conn.close();
  }
}

const received = (path: string) =>
  new Set(
    receiver
      .to(path)
      .flatMap((r) => (r.json as Array<{ details: { event_at: string } }>).map((e) => e.details.event_at)),
  );

it('loses nothing when killed mid-batch and mid-delivery', async () => {
  const t = await createTenant(ctx.db, { name: 'kill', tier: 'enterprise' });
  const allOn = Object.fromEntries(WEBHOOK_EVENT_TOGGLES.map((k) => [k, true])) as never;
  await webhooks.create(ctx.db, t.id, {
    id: newId(IdPrefix.emailEventsWebhook),
    event: 'EMAIL_EVENT',
    url: receiver.url('/kill'),
    events: allOn,
    headerNames: [],
    headersSealed: null,
    secretSealed: ctx.sealer.seal(`whsec_${Buffer.alloc(32, 7).toString('base64')}`),
  });

  // 1. Killed while its batcher holds consumed, unacknowledged events.
  service = await startService();
  // Both shapes: 20 single-event messages and two group messages of 10 (email.event version 2).
  for (let i = 0; i < 20; i++) await publishEmailEvent(ctx.bus, t.id, emailEvent('MAIL_DELIVERED', at(i)));
  for (const from of [20, 30]) {
    const group = Array.from({ length: 10 }, (_, i) => emailEvent('MAIL_DELIVERED', at(from + i)));
    await publishEmailEventGroup(ctx.bus, t.id, group);
  }
  await eventually(async () => {
    const q = await queueDepth();
    return q.messageCount === 0 && q.consumerCount === 1;
  }, 'every event taken by the dispatcher');
  expect(receiver.to('/kill')).toHaveLength(0);
  service.child.kill('SIGKILL');
  expect((await service.exited).signal).toBe('SIGKILL');

  // 2. Restarted with a receiver that hangs: the batch is stored and its request in flight.
  let release: () => void = () => {};
  const held = new Promise<void>((r) => {
    release = r;
  });
  receiver.reply(() => ({ status: 200, hold: held }));
  service = await startService();
  await eventually(() => receiver.to('/kill').length >= 1, 'a request in flight', 60_000);
  // The redelivered messages were stored once: every event in exactly one delivery.
  const stored = await ctx.db.query<{ at: string }>(
    `SELECT e->'details'->>'event_at' AS at FROM webhook_deliveries d, jsonb_array_elements(d.body::jsonb) AS e
      WHERE d.tenant_id = $1`,
    [t.id],
  );
  expect(stored.rows.map((r) => r.at).sort()).toEqual(Array.from({ length: 40 }, (_, i) => at(i)));
  service.child.kill('SIGKILL');
  expect((await service.exited).signal).toBe('SIGKILL');
  release();
  receiver.reply(() => ({ status: 200 }));
  const before = receiver.to('/kill').length;

  // 3. Restarted: the claimed delivery comes due again after its lease and is delivered.
  service = await startService();
  await eventually(
    () => receiver.to('/kill').length > before && received('/kill').size === 40,
    'all 40 events',
    90_000,
  );
  const { rows } = await ctx.db.query<{ status: string }>(
    'SELECT status FROM webhook_deliveries WHERE tenant_id = $1',
    [t.id],
  );
  await eventually(async () => {
    const r = await ctx.db.query<{ n: string }>(
      "SELECT count(*) AS n FROM webhook_deliveries WHERE tenant_id = $1 AND status <> 'delivered'",
      [t.id],
    );
    return Number(r.rows[0]!.n) === 0;
  }, 'every delivery delivered');
  expect(rows.length).toBeGreaterThan(0);

  // Run alone, it serves health and metrics on OPS_PORT and drains on SIGTERM.
  const ready = await fetch(`http://127.0.0.1:${opsPort}/readyz`);
  expect(await ready.json()).toEqual({ status: 'ready', checks: { db: 'ok', bus: 'ok', kv: 'ok' } });
  const metrics = await (await fetch(`http://127.0.0.1:${opsPort}/metrics`)).text();
  expect(metrics).toMatch(/mailyard_webhook_attempts_total\{result="delivered"\} [1-9]/);
  service.child.kill('SIGTERM');
  expect((await service.exited).code).toBe(0);
  service = undefined;
});
