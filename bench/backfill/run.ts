/**
 * IMAP history backfill benchmark: a Dovecot mailbox of BENCH_MESSAGES (20,000) dated messages
 * (Maildir files written directly, then indexed by Dovecot before the clock starts) imported
 * through the real path: a job started with POST /v1/imap/{mailerID}/history on a gateway
 * process, run by an imap-backfill worker process, posted through RabbitMQ to a
 * webhook-dispatcher process and delivered to a local HTTP receiver, on the real PostgreSQL,
 * RabbitMQ and Redis. Beside it, in the same run, a bare imapflow client fetching every source
 * once measures the IMAP ceiling of the machine. Prints JSON (and keeps it in bench/results/).
 *
 *   pnpm bench:backfill                                   # 20,000 messages
 *   BENCH_MESSAGES=50000 pnpm bench:backfill              # memory stays flat?
 *   BENCH_WORKER_ENV='BACKFILL_SLICE_DAYS=30' pnpm bench:backfill
 *   BENCH_DISPATCHER_ENV='WEBHOOK_ENDPOINT_CONCURRENCY=8' pnpm bench:backfill
 *   BENCH_WORKER=tsx pnpm bench:backfill    # the worker from source (tsx) instead of a bundle
 *   BENCH_SERVICES_ROOT=/tmp/base pnpm bench:backfill   # services of another checkout (baseline)
 *   BENCH_CPU_PROF=1 pnpm bench:backfill    # worker and dispatcher --cpu-prof into bench/results/prof-*
 */
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import {
  type Dovecot,
  type DovecotMessage,
  ensureTestCa,
  startDovecot,
} from '@mailyard/testkit/peers/dovecot';
import { startWebhookReceiver } from '@mailyard/testkit/peers/webhook-receiver';
import { REPO_ROOT, type Spawned, freePort, spawnTs } from '@mailyard/testkit/process';
import {
  PG_ADMIN_URL,
  createTestDatabase,
  createTestVhost,
  serverEnv,
  testRedisPrefix,
} from '@mailyard/testkit/servers';
import { build } from 'esbuild';
import { ImapFlow } from 'imapflow';
import pg from 'pg';
import { CpuTally, pidsByName } from '../support/cpu';
import { memory } from '../support/proc';

const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 20_000);
const KEY = 'myk_bench_backfill_bootstrap_key_0123456789ab';
const USER = 'owner@bench.test';
const PASS = 'Bench-Backfill-1';
const DAY = 86_400_000;
const RESULTS = join(REPO_ROOT, 'bench', 'results');
/** `bundle` (default): the worker as the image runs it (esbuild, deploy/build-dist.mjs); `tsx`: from source. */
const WORKER_FORM = process.env.BENCH_WORKER === 'tsx' ? 'tsx' : 'bundle';
/**
 * Where the services' code comes from: this checkout, or another one (a `git worktree` of an
 * earlier commit, dependencies installed) to measure a baseline with the same bench.
 */
const SERVICES_ROOT = process.env.BENCH_SERVICES_ROOT ?? REPO_ROOT;
const service = (name: string) => join(SERVICES_ROOT, 'services', name, 'src', 'main.ts');

/** `A=1 B=2` -> {A: '1', B: '2'}. */
function envList(text: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of (text ?? '').split(/\s+/).filter(Boolean)) {
    const i = pair.indexOf('=');
    if (i > 0) out[pair.slice(0, i)] = pair.slice(i + 1);
  }
  return out;
}

/**
 * A realistic mix: 45% short text/plain (~1.5 KB), 45% multipart/alternative text + HTML
 * (~4 KB), 10% with a 16 KB attachment (base64); dates spread over the past 360 days.
 */
function message(i: number, n: number): DovecotMessage {
  const date = new Date(Date.now() - 360 * DAY + Math.floor((360 * DAY * i) / n));
  const id = String(i).padStart(6, '0');
  const head = [
    `From: Sender ${i % 37} <sender${i % 37}@example.org>`,
    `To: ${USER}`,
    ...(i % 5 === 0 ? [`Cc: Team <team${i % 3}@example.org>`] : []),
    `Subject: Quarterly numbers and other news, part ${id}`,
    `Date: ${date.toUTCString()}`,
    `Message-ID: <bench-${id}@example.org>`,
    'MIME-Version: 1.0',
  ];
  const para = `Paragraph of message ${id}: the figures for the quarter are in, and they look fine. `.repeat(
    4,
  );
  const text = Array.from({ length: 4 }, () => para).join('\r\n\r\n');
  let raw: string;
  if (i % 10 === 9) {
    const attachment = Buffer.alloc(16_384, i % 251)
      .toString('base64')
      .replace(/.{76}/g, '$&\r\n');
    raw = [
      ...head,
      'Content-Type: multipart/mixed; boundary="mix"',
      '',
      '--mix',
      'Content-Type: text/plain; charset=utf-8',
      '',
      text,
      '--mix',
      `Content-Type: application/pdf; name="report-${id}.pdf"`,
      'Content-Transfer-Encoding: base64',
      `Content-Disposition: attachment; filename="report-${id}.pdf"`,
      '',
      attachment,
      '--mix--',
      '',
    ].join('\r\n');
  } else if (i % 2 === 1) {
    const html = `<html><body>${text
      .split('\r\n\r\n')
      .map((p) => `<p style="margin:0 0 12px">${p}</p>`)
      .join('')}<p><a href="https://example.org/q/${id}">Read more</a></p></body></html>`;
    raw = [
      ...head,
      'Content-Type: multipart/alternative; boundary="alt"',
      '',
      '--alt',
      'Content-Type: text/plain; charset=utf-8',
      '',
      text,
      '--alt',
      'Content-Type: text/html; charset=utf-8',
      '',
      html,
      '--alt--',
      '',
    ].join('\r\n');
  } else {
    raw = [...head, 'Content-Type: text/plain; charset=utf-8', '', text, ''].join('\r\n');
  }
  return { raw, date, seen: i % 3 === 0 };
}

function imapClient(dovecot: Dovecot, ca: Buffer): ImapFlow {
  const client = new ImapFlow({
    host: dovecot.host,
    port: 993,
    secure: true,
    auth: { user: USER, pass: PASS },
    tls: { ca: [ca] },
    logger: false,
  });
  client.on('error', () => {});
  return client;
}

/** Lets Dovecot index the seeded Maildir (the worker's first SELECT would otherwise pay for it). */
async function indexMailbox(dovecot: Dovecot, ca: Buffer): Promise<void> {
  const client = imapClient(dovecot, ca);
  await client.connect();
  await client.mailboxOpen('INBOX', { readOnly: true });
  for await (const _ of client.fetch('1:*', { uid: true, internalDate: true, size: true })) {
    // reading every message's metadata builds Dovecot's index and cache
  }
  await client.logout();
}

/** The IMAP ceiling: one imapflow connection fetching every full source once, nothing else. */
async function imapCeiling(dovecot: Dovecot, ca: Buffer): Promise<{ msgs_per_sec: number; mb: number }> {
  const client = imapClient(dovecot, ca);
  await client.connect();
  await client.mailboxOpen('INBOX', { readOnly: true });
  const t0 = Date.now();
  let n = 0;
  let bytes = 0;
  for await (const m of client.fetch('1:*', { uid: true, source: true })) {
    n++;
    bytes += m.source?.length ?? 0;
  }
  const seconds = (Date.now() - t0) / 1000;
  await client.logout();
  return { msgs_per_sec: Math.round(n / seconds), mb: Math.round(bytes / 1e6) };
}

/**
 * The worker bundled the way deploy/build-dist.mjs bundles services for the image (one CommonJS
 * file, dependencies included), under .tmp/bench-dist/bin/ with the migrations beside it where
 * the bundle looks for them (<bin>/../../migrations).
 */
async function bundleWorker(): Promise<string> {
  const root = join(REPO_ROOT, '.tmp', 'bench-dist', SERVICES_ROOT === REPO_ROOT ? 'this' : 'other');
  await build({
    entryPoints: { 'imap-backfill': service('imap-backfill') },
    outdir: join(root, 'dist', 'bin'),
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    sourcemap: true,
    external: ['@electric-sql/pglite', 'pg-native'],
    logLevel: 'warning',
  });
  const migrations = join(root, 'migrations');
  if (!existsSync(migrations)) symlinkSync(join(SERVICES_ROOT, 'libs/platform/migrations'), migrations);
  return join(root, 'dist', 'bin', 'imap-backfill.js');
}

async function main(): Promise<void> {
  // Every process (this one's Dovecot peer check, the gateway's verify, the worker) trusts the test CA.
  const caPath = await ensureTestCa();
  process.env.NODE_EXTRA_CA_CERTS = caPath;
  const ca = readFileSync(caPath);
  mkdirSync(RESULTS, { recursive: true });

  const tSeed = Date.now();
  const dovecot = await startDovecot({
    user: USER,
    pass: PASS,
    messages: Array.from({ length: MESSAGES }, (_, i) => message(i, MESSAGES)),
  });
  await indexMailbox(dovecot, ca);
  const seedSeconds = (Date.now() - tSeed) / 1000;
  const ceiling = await imapCeiling(dovecot, ca);

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
  };
  const workerEnv = {
    BACKFILL_POLL_MS: '100',
    IMAP_SYNC: '0',
    ...envList(process.env.BENCH_WORKER_ENV),
  };
  const profDir = join(RESULTS, `prof-${Date.now()}`);
  const profile = (name: string) => [
    ...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${join(profDir, name)}`] : []),
    ...(process.env.BENCH_NODE_ARGS ?? '').split(/\s+/).filter(Boolean),
  ];
  const processes: Spawned[] = [];
  try {
    const dispatcher = spawnTs(
      service('webhook-dispatcher'),
      { ...stores, ...envList(process.env.BENCH_DISPATCHER_ENV) },
      [],
      profile('webhook-dispatcher'),
    );
    processes.push(dispatcher);
    await dispatcher.waitFor(/webhook-dispatcher: consuming/, 60_000);
    const workerOps = await freePort();
    const worker = spawnTs(
      WORKER_FORM === 'tsx' ? service('imap-backfill') : await bundleWorker(),
      { ...stores, ...workerEnv, OPS_PORT: String(workerOps) },
      [],
      profile('imap-backfill'),
    );
    processes.push(worker);
    await worker.waitFor(/Mailyard imap-backfill started/, 60_000);
    const gwPort = await freePort();
    const gateway = spawnTs(service('gateway'), {
      ...stores,
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
    const created = await api('POST', '/v1/imapbasic/verify', {
      name: 'Bench mailbox',
      email: USER,
      config_type: 'imap',
      connection_type: 'basic',
      config: { host: dovecot.host, port: 993, username: USER, password: PASS, secure: 'SSL' },
      webhook: { url: receiver.url('/incoming'), method: 'POST', headers: { 'X-Bench': '1' } },
    });
    const mailerId = String(created.mailer_id);

    // The PostgreSQL server is shared with other sessions: this run's share is the CPU of the
    // backends (and autovacuum workers) of its own database, listed by pg_stat_activity.
    const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
    await admin.connect();
    let ourBackends: number[] = [];
    const refreshBackends = async () => {
      const { rows } = await admin.query<{ pid: number }>(
        'SELECT pid FROM pg_stat_activity WHERE datname = $1',
        [db.name],
      );
      ourBackends = rows.map((r) => r.pid);
    };
    await refreshBackends();
    const tallies = {
      imap_backfill_worker: new CpuTally(() => [worker.child.pid!]),
      webhook_dispatcher: new CpuTally(() => [dispatcher.child.pid!]),
      gateway: new CpuTally(() => [gateway.child.pid!]),
      dovecot_imap: new CpuTally(() => pidsByName('imap')),
      postgresql_this_database: new CpuTally(() => ourBackends),
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
      if (ticks % 5 === 1) for (const t of Object.values(tallies)) t.sample();
      countDelivered();
      if (!tDelivered && delivered >= MESSAGES) tDelivered = Date.now();
      if (!tImported) {
        status = await api('GET', `/v1/imap/${mailerId}/history/${jobId}`);
        if (['done', 'failed', 'cancelled'].includes(String(status.status))) tImported = Date.now();
      }
    }
    const cpu = Object.fromEntries(Object.entries(tallies).map(([k, t]) => [k, t.seconds()]));
    await admin.end();
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
        'bench_receiver: this process (the local HTTP receiver parsing every body, and the status polls)',
      ],
      messages: MESSAGES,
      mailbox_mb: ceiling.mb,
      seed_and_index_seconds: Number(seedSeconds.toFixed(1)),
      services_from: SERVICES_ROOT === REPO_ROOT ? 'this checkout' : SERVICES_ROOT,
      worker_form: WORKER_FORM === 'tsx' ? 'source through tsx' : 'esbuild bundle (as in the image)',
      worker_env: workerEnv,
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
      imap_ceiling: { ...ceiling, command: 'imapflow FETCH 1:* BODY[] on one connection, nothing else' },
      ratio_imported_to_imap_ceiling: Number((processed / importSeconds / ceiling.msgs_per_sec).toFixed(3)),
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
    await dovecot.stop();
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
