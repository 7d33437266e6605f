/**
 * History backfill benchmark: a mailbox of BENCH_MESSAGES dated messages imported through the
 * real path: a job started with POST /v1/imap/{mailerID}/history on a gateway process, run by an
 * imap-backfill worker process, posted through RabbitMQ to a webhook-dispatcher process and
 * delivered to a local HTTP receiver, on the real PostgreSQL, RabbitMQ and Redis. The mailbox
 * (mailboxes.ts, BENCH_PROVIDER): a real Dovecot over IMAP (default, 20,000 messages), or the
 * Gmail API / Microsoft Graph stand-ins in this process with an OAuth mailer (5,000). Beside it, in
 * the same run, every source fetched once with nothing else measures the mailbox's ceiling.
 * Prints JSON (and keeps it in bench/results/).
 *
 *   pnpm bench:backfill                                   # IMAP, 20,000 messages
 *   BENCH_PROVIDER=gmail pnpm bench:backfill              # Gmail API stand-in, 5,000 messages
 *   BENCH_PROVIDER=graph BENCH_MESSAGES=2000 pnpm bench:backfill
 *   BENCH_MESSAGES=50000 pnpm bench:backfill              # memory stays flat?
 *   BENCH_WORKER_ENV='BACKFILL_SLICE_DAYS=30' pnpm bench:backfill
 *   BENCH_DISPATCHER_ENV='WEBHOOK_ENDPOINT_CONCURRENCY=8' pnpm bench:backfill
 *   BENCH_WORKER_NODE_ARGS='--max-old-space-size=256' pnpm bench:backfill  # node flags of the worker only
 *   BENCH_WORKER_ENV='NODE_OPTIONS=' pnpm bench:backfill  # without the deployments' --max-semi-space-size=2
 *   BENCH_RUNTIME=tsx pnpm bench:backfill   # the services from source (tsx) instead of the image's bundles
 *   BENCH_SERVICES_ROOT=/tmp/base pnpm bench:backfill   # services of another checkout (baseline)
 *   BENCH_CPU_PROF=1 pnpm bench:backfill    # worker and dispatcher --cpu-prof into bench/results/prof-*
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { ensureTestCa } from '@mailyard/testkit/peers/dovecot';
import { startWebhookReceiver } from '@mailyard/testkit/peers/webhook-receiver';
import { REPO_ROOT, type Spawned, freePort } from '@mailyard/testkit/process';
import {
  PG_ADMIN_URL,
  createTestDatabase,
  createTestVhost,
  serverEnv,
  testRedisPrefix,
} from '@mailyard/testkit/servers';
import pg from 'pg';
import { CpuTally, pidsByName } from '../support/cpu';
import { envList, memory } from '../support/proc';
import { servicesForm, spawnService } from '../support/services';
import { PROVIDERS, type Provider, openBenchMailbox } from './mailboxes';

/** Where the mailbox is: IMAP (Dovecot), or the Gmail API / Microsoft Graph stand-ins (mailboxes.ts). */
const PROVIDER = (process.env.BENCH_PROVIDER ?? 'imap') as Provider;
if (!PROVIDERS.includes(PROVIDER)) throw new Error(`BENCH_PROVIDER: one of ${PROVIDERS.join(', ')}`);
const MESSAGES = Number(process.env.BENCH_MESSAGES ?? (PROVIDER === 'imap' ? 20_000 : 5_000));
const KEY = 'myk_bench_backfill_bootstrap_key_0123456789ab';
const DAY = 86_400_000;
const RESULTS = join(REPO_ROOT, 'bench', 'results');

async function main(): Promise<void> {
  // Every process (this one's Dovecot peer check, the gateway's verify, the worker) trusts the test CA.
  const caPath = await ensureTestCa();
  process.env.NODE_EXTRA_CA_CERTS = caPath;
  const ca = readFileSync(caPath);
  mkdirSync(RESULTS, { recursive: true });

  const mailbox = await openBenchMailbox(PROVIDER, MESSAGES, ca);
  const seedSeconds = mailbox.seedSeconds;
  const ceiling = await mailbox.ceiling();

  const db = await createTestDatabase();
  const vhost = createTestVhost();
  const receiver = await startWebhookReceiver();
  const stores = {
    ...serverEnv(db, vhost),
    REDIS_KEY_PREFIX: testRedisPrefix(),
    LOG_LEVEL: 'warn',
    NODE_ENV: 'production',
    OPS_PORT: '0',
    MAILER_ALLOW_PRIVATE_HOSTS: '1',
    WEBHOOK_ALLOW_INSECURE: '1',
    ...mailbox.env,
  };
  const workerEnv = {
    BACKFILL_POLL_MS: '100',
    IMAP_SYNC: '0',
    // As k8s/base/imap-backfill.yaml and docker-compose.yml run it (docs/backfill.md "Memory").
    NODE_OPTIONS: '--max-semi-space-size=2',
    ...envList(process.env.BENCH_WORKER_ENV),
  };
  /** Node flags of the worker alone (e.g. the ones k8s/base/imap-backfill.yaml gives it). */
  const workerNodeArgs = (process.env.BENCH_WORKER_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
  const profDir = join(RESULTS, `prof-${Date.now()}`);
  const profile = (name: string) => [
    ...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${join(profDir, name)}`] : []),
    ...(process.env.BENCH_NODE_ARGS ?? '').split(/\s+/).filter(Boolean),
  ];
  const processes: Spawned[] = [];
  try {
    // PGAPPNAME names each process's PostgreSQL sessions, so the database's CPU splits by client.
    const dispatcher = spawnService(
      'webhook-dispatcher',
      { ...stores, PGAPPNAME: 'bench-dispatcher', ...envList(process.env.BENCH_DISPATCHER_ENV) },
      profile('webhook-dispatcher'),
    );
    processes.push(dispatcher);
    await dispatcher.waitFor(/webhook-dispatcher: consuming/, 60_000);
    const workerOps = await freePort();
    const worker = spawnService(
      'imap-backfill',
      { ...stores, ...workerEnv, OPS_PORT: String(workerOps), PGAPPNAME: 'bench-worker' },
      [...profile('imap-backfill'), ...workerNodeArgs],
    );
    processes.push(worker);
    await worker.waitFor(/Mailyard imap-backfill started/, 60_000);
    const gwPort = await freePort();
    const gateway = spawnService('gateway', {
      ...stores,
      PGAPPNAME: 'bench-gateway',
      PORT: String(gwPort),
      BOOTSTRAP_API_KEY: KEY,
      BOOTSTRAP_TIER: 'enterprise',
      RATE_LIMIT_ENTERPRISE: '1000000000',
    });
    processes.push(gateway);
    await gateway.waitFor(/Mailyard gateway started/, 60_000);

    const api = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`http://127.0.0.1:${gwPort}${path}`, {
        method,
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      const json = (await res.json()) as Record<string, unknown>;
      if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
      return json;
    };
    const mailerId = await mailbox.connect(api, `http://127.0.0.1:${gwPort}`, receiver.url('/incoming'));

    // The PostgreSQL server is shared with other sessions: this run's share is the CPU of the
    // backends (and autovacuum workers) of its own database, listed by pg_stat_activity.
    const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
    await admin.connect();
    let ourBackends: Array<{ pid: number; application_name: string }> = [];
    const refreshBackends = async () => {
      const { rows } = await admin.query<{ pid: number; application_name: string }>(
        'SELECT pid, application_name FROM pg_stat_activity WHERE datname = $1',
        [db.name],
      );
      ourBackends = rows;
    };
    const backendsOf = (app: string) =>
      ourBackends.filter((b) => b.application_name === app).map((b) => b.pid);
    await refreshBackends();
    // Rows written per table during the run (this database only), per imported message.
    const runDb = new pg.Client({ connectionString: db.url });
    await runDb.connect();
    const tableWrites = async () => {
      const { rows } = await runDb.query<{ relname: string; ins: string; upd: string; del: string }>(
        'SELECT relname, n_tup_ins AS ins, n_tup_upd AS upd, n_tup_del AS del FROM pg_stat_user_tables',
      );
      return new Map(rows.map((r) => [r.relname, [Number(r.ins), Number(r.upd), Number(r.del)] as const]));
    };
    const commits = async () =>
      Number(
        (
          await admin.query<{ n: string }>(
            'SELECT xact_commit AS n FROM pg_stat_database WHERE datname = $1',
            [db.name],
          )
        ).rows[0]?.n ?? 0,
      );
    const writesBefore = await tableWrites();
    const commitsBefore = await commits();
    const tallies = {
      imap_backfill_worker: new CpuTally(() => [worker.child.pid!]),
      webhook_dispatcher: new CpuTally(() => [dispatcher.child.pid!]),
      gateway: new CpuTally(() => [gateway.child.pid!]),
      ...(PROVIDER === 'imap' ? { dovecot_imap: new CpuTally(() => mailbox.serverPids()) } : {}),
      postgresql_this_database: new CpuTally(() => ourBackends.map((b) => b.pid)),
      postgresql_for_worker: new CpuTally(() => backendsOf('bench-worker')),
      postgresql_for_dispatcher: new CpuTally(() => backendsOf('bench-dispatcher')),
      postgresql_for_gateway: new CpuTally(() => backendsOf('bench-gateway')),
      postgresql_server_all_sessions: new CpuTally(() => pidsByName('postgres')),
      rabbitmq: new CpuTally(() => pidsByName('beam.smp')),
      bench_receiver: new CpuTally(() => [process.pid]),
    };
    const rssBefore = memory(worker.child.pid!).rssMb;
    let rssPeakSampled = rssBefore;
    // The worker's own view (/metrics on its ops port): V8 heap and memory outside it (Buffers).
    const heapPeak = { heap_used: 0, heap_total: 0, external: 0 };
    const sampleHeap = async () => {
      const text = await fetch(`http://127.0.0.1:${workerOps}/metrics`).then(
        (r) => r.text(),
        () => '',
      );
      const mb = (name: string) =>
        Math.round(Number(new RegExp(`^mailyard_${name} (\\S+)`, 'm').exec(text)?.[1] ?? 0) / 1e6);
      heapPeak.heap_used = Math.max(heapPeak.heap_used, mb('nodejs_heap_size_used_bytes'));
      heapPeak.heap_total = Math.max(heapPeak.heap_total, mb('nodejs_heap_size_total_bytes'));
      heapPeak.external = Math.max(heapPeak.external, mb('nodejs_external_memory_bytes'));
    };
    let ticks = 0;
    const t0 = Date.now();
    const started = await api('POST', `/v1/imap/${mailerId}/history`, {
      window_start: new Date(Date.now() - 365 * DAY).toISOString().replace(/\.\d+Z$/, 'Z'),
    });
    const jobId = String(started.jobId);

    let seen = 0;
    let delivered = 0;
    const messageIds = new Set<string>();
    const countDelivered = () => {
      for (; seen < receiver.requests.length; seen++) {
        const r = receiver.requests[seen]!;
        if (r.headers['x-history-backfill-job-id'] !== jobId) continue;
        const j = r.json as { event?: string; details?: Record<string, unknown> };
        if (j?.event !== 'INCOMING_EMAIL') continue;
        delivered++;
        messageIds.add(String(j.details?.['message-id']));
        r.body = ''; // keep the receiver's memory small
        r.json = undefined;
      }
    };
    let status: Record<string, unknown> = {};
    let tImported = 0;
    let tDelivered = 0;
    const deadline = t0 + Number(process.env.BENCH_TIMEOUT_S ?? 1800) * 1000;
    while ((!tImported || !tDelivered) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      rssPeakSampled = Math.max(rssPeakSampled, memory(worker.child.pid!).rssMb);
      if (ticks++ % 5 === 0) await sampleHeap();
      await refreshBackends();
      tallies.postgresql_this_database.sample();
      tallies.postgresql_for_worker.sample();
      tallies.postgresql_for_dispatcher.sample();
      if (ticks % 5 === 1) for (const t of Object.values(tallies)) t.sample();
      countDelivered();
      if (!tDelivered && delivered >= MESSAGES) tDelivered = Date.now();
      if (!tImported) {
        status = await api('GET', `/v1/imap/${mailerId}/history/${jobId}`);
        if (['done', 'failed', 'cancelled'].includes(String(status.status))) tImported = Date.now();
      }
    }
    const cpu = Object.fromEntries(Object.entries(tallies).map(([k, t]) => [k, t.seconds()]));
    // pg_stat counters reach the view within PGSTAT flush interval (about a second): let them settle.
    await new Promise((r) => setTimeout(r, 1500));
    const writesAfter = await tableWrites();
    const commitsRun = (await commits()) - commitsBefore;
    await runDb.end();
    await admin.end();
    const perMessage = (n: number) => Number((n / MESSAGES).toFixed(3));
    const rowsWritten: Record<string, { ins: number; upd: number; del: number }> = {};
    for (const [table, after] of writesAfter) {
      const before = writesBefore.get(table) ?? [0, 0, 0];
      const [ins, upd, del] = after.map((v, i) => perMessage(v - before[i]!)) as [number, number, number];
      if (ins || upd || del) rowsWritten[table] = { ins, upd, del };
    }
    const workerPeak = Math.max(rssPeakSampled, memory(worker.child.pid!).peakMb);
    if (!tImported || status.status !== 'done')
      throw new Error(`job did not finish: ${JSON.stringify(status)}`);
    const importSeconds = (tImported - t0) / 1000;
    const deliverSeconds = tDelivered ? (tDelivered - t0) / 1000 : null;
    const processed = Number(status.processed);
    const report = {
      benchmark: 'backfill',
      at: new Date().toISOString(),
      machine: {
        cpus: cpus().length,
        loadavg_1m_at_end: Number(loadavg()[0]!.toFixed(2)),
        note: 'shared with other sessions: compare ratios and CPU-ms, not absolute rates',
      },
      notes: [
        "postgresql_this_database: the backends of this run's database; postgresql_server_all_sessions and rabbitmq include other sessions on the shared servers",
        'postgresql_for_<service>: the backends of that service (PGAPPNAME); postgresql_rows_per_message: rows inserted/updated/deleted per table (pg_stat_user_tables) per message, commits from pg_stat_database',
        PROVIDER === 'imap'
          ? 'bench_receiver: this process (the local HTTP receiver parsing every body, and the status polls)'
          : 'bench_receiver: this process: the local HTTP receiver, the status polls and the API and identity stand-ins serving the worker',
      ],
      provider: PROVIDER,
      messages: MESSAGES,
      mailbox_mb: ceiling.mb,
      seed_and_index_seconds: Number(seedSeconds.toFixed(1)),
      ...servicesForm(),
      worker_env: workerEnv,
      worker_node_args: workerNodeArgs,
      dispatcher_env: envList(process.env.BENCH_DISPATCHER_ENV),
      ...(process.env.BENCH_CPU_PROF ? { cpu_profiles: profDir } : {}),
      imported: {
        processed,
        seconds: Number(importSeconds.toFixed(2)),
        msgs_per_sec: Math.round(processed / importSeconds),
      },
      delivered_to_receiver: {
        requests: delivered,
        distinct_message_ids: messageIds.size,
        seconds: deliverSeconds === null ? null : Number(deliverSeconds.toFixed(2)),
        msgs_per_sec: deliverSeconds === null ? null : Math.round(MESSAGES / deliverSeconds),
        lag_after_import_seconds:
          deliverSeconds === null ? null : Number((deliverSeconds - importSeconds).toFixed(2)),
      },
      worker_rss_mb: { before: rssBefore, peak: workerPeak },
      worker_memory_peaks_mb: heapPeak,
      cpu_seconds_by_process: Object.fromEntries(
        Object.entries(cpu).map(([k, v]) => [k, Number(v.toFixed(2))]),
      ),
      cpu_ms_per_message: Object.fromEntries(
        Object.entries(cpu).map(([k, v]) => [k, Number(((v * 1000) / MESSAGES).toFixed(3))]),
      ),
      postgresql_rows_per_message: rowsWritten,
      postgresql_commits_per_message: perMessage(commitsRun),
      ceiling,
      ratio_imported_to_ceiling: Number((processed / importSeconds / ceiling.msgs_per_sec).toFixed(3)),
      aim: { msgs_per_sec: 500, worker_rss_mb_below: 200 },
    };
    const json = JSON.stringify(report, null, 2);
    process.stdout.write(`${json}\n`);
    writeFileSync(join(RESULTS, `backfill-${Date.now()}.json`), json);
    writeFileSync(join(RESULTS, 'backfill-last-worker.log'), worker.output());
  } finally {
    for (const p of processes.reverse()) {
      p.child.kill('SIGTERM');
      await p.exited;
    }
    await receiver.close();
    await mailbox.stop();
    await db.drop();
    await vhost.drop();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`${(err as Error).stack}\n`);
    process.exit(1);
  },
);
