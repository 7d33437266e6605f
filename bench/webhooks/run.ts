/**
 * Webhook dispatcher benchmark: events published on the bus (as the send service publishes them)
 * for several accounts, delivered by a webhook-dispatcher process to local HTTP receivers, on the
 * real PostgreSQL and RabbitMQ. One extra account's receiver answers after 2 s; the others must
 * keep their rate. Runs batched (WEBHOOK_BATCH_MAX=100) and unbatched (1). Prints JSON.
 *
 *   pnpm bench:webhooks                      # 5000 events over 10 accounts
 *   BENCH_EVENTS=20000 BENCH_ACCOUNTS=20 pnpm bench:webhooks
 */
import { IdPrefix, WEBHOOK_EVENT_TOGGLES, newId } from '@mailyard/contracts';
import { closeContext, configFrom, createLogger, openContext } from '@mailyard/platform';
import { createTenant, webhooks } from '@mailyard/store';
import { startWebhookReceiver } from '@mailyard/testkit/peers/webhook-receiver';
import { freePort, spawnTs } from '@mailyard/testkit/process';
import { createTestDatabase, createTestVhost, serverEnv } from '@mailyard/testkit/servers';
import { at, emailEvent, publishEmailEvent } from '@mailyard/testkit/webhooks';
import { runMain, stopProcess } from '../support/proc';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 5000);
const ACCOUNTS = Number(process.env.BENCH_ACCOUNTS ?? 10);

async function runOnce(batchMax: number) {
  const db = await createTestDatabase();
  const vhost = createTestVhost();
  const env = serverEnv(db, vhost);
  const ctx = await openContext(configFrom({ ...env, LOG_LEVEL: 'error' }), createLogger('bench', 'error'));
  const receiver = await startWebhookReceiver();
  receiver.reply((req) => (req.path === '/slow' ? { status: 200, delayMs: 2000 } : { status: 200 }));
  const allOn = Object.fromEntries(WEBHOOK_EVENT_TOGGLES.map((t) => [t, true])) as never;
  const tenants: string[] = [];
  for (let i = 0; i <= ACCOUNTS; i++) {
    const t = await createTenant(ctx.db, { name: `bench-${i}`, tier: 'enterprise' });
    await webhooks.create(ctx.db, t.id, {
      id: newId(IdPrefix.emailEventsWebhook),
      event: 'EMAIL_EVENT',
      url: receiver.url(i === ACCOUNTS ? '/slow' : `/fast-${i}`),
      events: allOn,
      headerNames: ['X-Bench'],
      headersSealed: ctx.sealer.seal(JSON.stringify({ 'X-Bench': '1' })),
      secretSealed: ctx.sealer.seal(`whsec_${Buffer.alloc(32, 1).toString('base64')}`),
    });
    tenants.push(t.id);
  }
  const service = spawnTs('services/webhook-dispatcher/src/main.ts', {
    ...env,
    OPS_PORT: String(await freePort()),
    LOG_LEVEL: 'error',
    WEBHOOK_ALLOW_INSECURE: '1',
    WEBHOOK_BATCH_MAX: String(batchMax),
  });
  await service.waitFor(/webhook-dispatcher: consuming/, 60_000);
  const count = (prefix: string) =>
    receiver.requests
      .filter((r) => r.path.startsWith(prefix))
      .reduce((n, r) => n + (Array.isArray(r.json) ? r.json.length : 1), 0);
  const started = Date.now();
  const perAccount = Math.floor(EVENTS / ACCOUNTS);
  const publishing: Promise<void>[] = [];
  for (let i = 0; i < perAccount; i++) {
    for (let a = 0; a < ACCOUNTS; a++)
      publishing.push(publishEmailEvent(ctx.bus, tenants[a]!, emailEvent('MAIL_DELIVERED', at(i))));
    if (i % 10 === 9)
      publishing.push(publishEmailEvent(ctx.bus, tenants[ACCOUNTS]!, emailEvent('MAIL_DELIVERED', at(i))));
    if (publishing.length > 500) await Promise.all(publishing.splice(0));
  }
  await Promise.all(publishing);
  const published = Date.now();
  const target = perAccount * ACCOUNTS;
  while (count('/fast') < target && Date.now() - started < 300_000)
    await new Promise((r) => setTimeout(r, 20));
  const done = Date.now();
  const result = {
    batch_max: batchMax,
    events: count('/fast'),
    requests: receiver.requests.filter((r) => r.path.startsWith('/fast')).length,
    publish_s: (published - started) / 1000,
    deliver_s: (done - started) / 1000,
    events_per_s: Math.round(count('/fast') / ((done - started) / 1000)),
    slow_events_delivered_meanwhile: count('/slow'),
  };
  await stopProcess(service);
  await receiver.close();
  await closeContext(ctx);
  await db.drop();
  await vhost.drop();
  return result;
}

async function main() {
  const results = [await runOnce(100), await runOnce(1)];
  process.stdout.write(`${JSON.stringify({ bench: 'webhooks', accounts: ACCOUNTS, results }, null, 2)}\n`);
}

runMain(main, { exit: true });
