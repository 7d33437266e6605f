/**
 * Webhook dispatcher benchmark: events published on the bus (as the send service publishes them)
 * for several accounts, delivered by a webhook-dispatcher process to local HTTP receivers, on the
 * real PostgreSQL and RabbitMQ. One extra account's receiver answers after 2 s; the others must
 * keep their rate. Runs batched (WEBHOOK_BATCH_MAX=100) and unbatched (1). Prints JSON.
 *
 * The events are published before the dispatcher starts (its durable queue is declared by every
 * bus connection), so the bench's own publisher is not what is measured: the clock runs from the
 * dispatcher's banner to the last fast event received. CPU per event is read from /proc for the
 * dispatcher process, this database's PostgreSQL backends and the bench process (the receivers).
 *
 *   pnpm bench:webhooks                      # 5000 events over 10 accounts, batched and unbatched
 *   BENCH_EVENTS=20000 BENCH_ACCOUNTS=20 pnpm bench:webhooks
 *   BENCH_BATCHES=1 pnpm bench:webhooks      # only the unbatched run
 *   BENCH_SERVICES_ROOT=../other-checkout pnpm bench:webhooks   # another checkout's dispatcher (same schema)
 *   BENCH_CPU_PROF=/tmp/prof pnpm bench:webhooks      # node --cpu-prof of the dispatcher
 *   BENCH_EVENTS_PER_MESSAGE=10 pnpm bench:webhooks   # groups of 10 per message (email.event version 2)
 */
import { loadavg } from 'node:os';
import { type EmailEvent, IdPrefix, WEBHOOK_EVENT_TOGGLES, newId } from '@mailyard/contracts';
import { closeContext, configFrom, createLogger, openContext } from '@mailyard/platform';
import { createTenant, webhooks } from '@mailyard/store';
import { startWebhookReceiver } from '@mailyard/testkit/peers/webhook-receiver';
import { freePort } from '@mailyard/testkit/process';
import { createTestDatabase, createTestVhost, serverEnv } from '@mailyard/testkit/servers';
import { at, emailEvent, publishEmailEvent, publishEmailEventGroup } from '@mailyard/testkit/webhooks';
import { CpuMeter, processTree } from '../support/cpu';
import { envList, printAndKeep, runMain, stopProcess } from '../support/proc';
import { servicesForm, spawnService } from '../support/services';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 5000);
const ACCOUNTS = Number(process.env.BENCH_ACCOUNTS ?? 10);
const BATCHES = (process.env.BENCH_BATCHES ?? '100,1').split(',').map(Number);
const PROF = process.env.BENCH_CPU_PROF;
/** Events per bus message (1: version 1, one each; above 1: email.event version-2 groups per account). */
const PER_MESSAGE = Number(process.env.BENCH_EVENTS_PER_MESSAGE ?? 1);

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
  // Everything is on the dispatcher's queue before it starts.
  const publishStarted = Date.now();
  const perAccount = Math.floor(EVENTS / ACCOUNTS);
  const publishing: Promise<void>[] = [];
  // Per account, up to PER_MESSAGE events in one message (email.event version 2 above 1).
  const pending = new Map<string, EmailEvent[]>();
  const publish = (tenantId: string, e: EmailEvent | null) => {
    const held = pending.get(tenantId) ?? [];
    if (e) held.push(e);
    pending.set(tenantId, held);
    if (held.length === 0 || (e && held.length < PER_MESSAGE)) return;
    pending.set(tenantId, []);
    publishing.push(
      held.length === 1
        ? publishEmailEvent(ctx.bus, tenantId, held[0]!)
        : publishEmailEventGroup(ctx.bus, tenantId, held),
    );
  };
  for (let i = 0; i < perAccount; i++) {
    for (let a = 0; a < ACCOUNTS; a++) publish(tenants[a]!, emailEvent('MAIL_DELIVERED', at(i)));
    if (i % 10 === 9) publish(tenants[ACCOUNTS]!, emailEvent('MAIL_DELIVERED', at(i)));
    if (publishing.length > 1000) await Promise.all(publishing.splice(0));
  }
  for (const t of tenants) publish(t, null);
  await Promise.all(publishing);
  const publishS = (Date.now() - publishStarted) / 1000;

  const count = (prefix: string) =>
    receiver.requests
      .filter((r) => r.path.startsWith(prefix))
      .reduce((n, r) => n + (Array.isArray(r.json) ? r.json.length : 1), 0);
  const service = spawnService(
    'webhook-dispatcher',
    {
      ...env,
      OPS_PORT: String(await freePort()),
      LOG_LEVEL: 'error',
      WEBHOOK_ALLOW_INSECURE: '1',
      WEBHOOK_BATCH_MAX: String(batchMax),
      ...envList(process.env.BENCH_DISPATCHER_ENV),
    },
    PROF ? ['--cpu-prof', `--cpu-prof-dir=${PROF}`] : [],
  );
  // This database's backends: read at both ends (the dispatcher's pool grows as it starts).
  const backends = async () =>
    (
      await ctx.db.query<{ pid: number }>(
        'SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
        [db.name],
      )
    ).rows.map((r) => r.pid);
  const meter = new CpuMeter({
    webhook_dispatcher: () => processTree(service.child.pid!),
    postgresql_this_database: backends,
    bench_receiver: () => [process.pid],
  });
  const pgStats = async () =>
    (
      await ctx.db.query<Record<string, number>>(
        `SELECT d.xact_commit::float AS commits, t.n_tup_ins::float AS inserted, t.n_tup_upd::float AS updated,
                t.n_tup_hot_upd::float AS hot_updated, d.tup_returned::float AS tup_returned,
                d.tup_fetched::float AS tup_fetched, d.blks_hit::float AS blocks_hit
           FROM pg_stat_database d, pg_stat_user_tables t
          WHERE d.datname = $1 AND t.relname = 'webhook_deliveries'`,
        [db.name],
      )
    ).rows[0]!;
  // From the banner on: the process's start (tsx compiling the sources) is not counted.
  await service.waitFor(/webhook-dispatcher: consuming/, 60_000);
  const pg0 = await pgStats();
  await meter.start();
  const started = Date.now();
  const target = perAccount * ACCOUNTS;
  while (count('/fast') < target && Date.now() - started < 300_000)
    await new Promise((r) => setTimeout(r, 20));
  const done = Date.now();
  const cpu = await meter.stop();
  await new Promise((r) => setTimeout(r, 600)); // statistics are flushed every 500 ms
  const pg1 = await pgStats();
  const delivered = count('/fast');
  const perEvent = (ms: number) => Number((ms / delivered).toFixed(3));
  const result = {
    batch_max: batchMax,
    events_per_message: PER_MESSAGE,
    events: delivered,
    requests: receiver.requests.filter((r) => r.path.startsWith('/fast')).length,
    publish_s: publishS,
    deliver_s: (done - started) / 1000,
    events_per_s: Math.round(delivered / ((done - started) / 1000)),
    slow_events_delivered_meanwhile: count('/slow'),
    loadavg_1m_at_end: Number(loadavg()[0]!.toFixed(2)),
    cpu_ms_per_event: Object.fromEntries(Object.entries(cpu).map(([k, ms]) => [k, perEvent(ms)])),
    // webhook_deliveries rows written and PostgreSQL work, per event
    postgresql_per_event: Object.fromEntries(
      Object.keys(pg1).map((k) => [k, Number(((pg1[k]! - pg0[k]!) / delivered).toFixed(3))]),
    ),
  };
  await stopProcess(service);
  await receiver.close();
  await closeContext(ctx);
  await db.drop();
  await vhost.drop();
  return result;
}

async function main() {
  const results = [];
  for (const b of BATCHES) results.push(await runOnce(b));
  printAndKeep('webhooks', {
    bench: 'webhooks',
    ...servicesForm(),
    accounts: ACCOUNTS,
    events: EVENTS,
    results,
  });
}

runMain(main, { exit: true });
