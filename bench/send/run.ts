/**
 * Send pipeline benchmark: emails through POST /v1/email/send on a gateway process, rendered,
 * DKIM-signed (rsa-sha256, 2048 bits) and delivered by send-service processes through
 * SMTP_RELAY_URL to Postfix's smtp-sink, on the real PostgreSQL, RabbitMQ and Redis. Phases
 * (BENCH_PHASES, comma-separated, default all, in this order):
 *
 *   single  BENCH_EMAILS single-recipient sends over BENCH_CONNECTIONS connections, end to end
 *   drain   the send service alone: commands queued while it was stopped, then drained
 *   batch   BENCH_BATCH_REQUESTS sends of BENCH_BATCH_RECIPIENTS recipients with substitutions
 *   spread  two send-service processes on one broker: the batch load again, counted per process
 *   ceiling Postfix's own smtp-source -> smtp-sink: the machine's SMTP ceiling in this run
 *   copy    the send service's per-copy work in this process (render, phishing, MIME, DKIM): CPU
 *   floor   batch copies rendered, checked, built, signed and written over SMTP (the service's own
 *           transport, pooled) to smtp-sink in this process, no database and no bus: the CPU
 *           floor of a delivered email (floor.ts).
 *   floors  every irreducible piece alone (HTTP accept, durable store, bus, copy), CPU-ms per
 *           email of every process, and the budget of each aim on this machine's cores
 *           (bench/floors/floors.ts); beside the single and batch figures of the same run.
 *           A run of only copy/floor/floors starts no services.
 *
 * For every phase: CPU milliseconds per email of each process group from /proc (gateway, send
 * services, this database's PostgreSQL backends, RabbitMQ), and with BENCH_PROFILE (default 1)
 * a `--cpu-prof` profile of the gateway and send services, summarized over the phase's window
 * into `bench/results/send-<time>.profile.md` beside `send-<time>.json` (the raw profiles stay
 * in `send-<time>-profiles/`).
 *
 *   pnpm bench:send
 *   BENCH_PHASES=single,ceiling BENCH_EMAILS=5000 pnpm bench:send
 *   BENCH_SEND_ENV='SEND_CONCURRENCY=128' pnpm bench:send
 *   BENCH_GATEWAY_ENV='NODE_OPTIONS=--max-semi-space-size=16' pnpm bench:send
 *   BENCH_DISPATCHER=1 pnpm bench:send   # plus a webhook dispatcher posting MAIL_DELIVERED to a receiver
 */
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { IdPrefix, WEBHOOK_EVENT_TOGGLES, newId } from '@mailyard/contracts';
import { closeContext } from '@mailyard/platform';
import { webhooks } from '@mailyard/store';
import { type DkimKeyPair, dkimKeyPair, insertDomainMailer } from '@mailyard/testkit/fixtures';
import { startSmtpSink } from '@mailyard/testkit/peers/smtp-sink';
import { type WebhookReceiver, startWebhookReceiver } from '@mailyard/testkit/peers/webhook-receiver';
import autocannon from 'autocannon';
import { floorsPhase } from '../floors/floors';
import { CpuMeter, pidsByName, processTree, rabbitmqServerPids } from '../support/cpu';
import { RESULTS, envList, printAndKeep, runMain } from '../support/proc';
import {
  type ProfileSummary,
  type Window,
  monotonicUs,
  readProfiles,
  summarize,
  summaryText,
} from '../support/profile';
import {
  benchServiceEnv,
  bootstrapTenantId,
  createBenchServers,
  openHarnessContext,
} from '../support/servers';
import { SERVICES_ROOT, migrateAsServices, servicesForm } from '../support/services';
import { copyCost } from './copy-cost';
import { floorCost } from './floor';
import { RequestLedger, account, committedEmails, lossIn } from './ledger';
import {
  DOMAIN,
  type Service,
  batchBody,
  benchClient,
  countDelivered,
  countersOf,
  pipelineBackends,
  singleBody,
  spawnBootstrapGateway,
  spawnService,
  stopService,
  waitDelivered,
} from './pipeline';

const run = promisify(execFile);

const EMAILS = Number(process.env.BENCH_EMAILS ?? 2000);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
/** autocannon's request timeout in seconds (its default 10): lower it to provoke timed-out requests. */
const API_TIMEOUT_S = Number(process.env.BENCH_API_TIMEOUT_S ?? 10);
/**
 * Diagnosis: the gateway process is stopped (SIGSTOP) this long once, 500 ms into the single
 * phase's load, then continued: a starved gateway as on a machine at load 24, longer than
 * BENCH_API_TIMEOUT_S so the requests in flight time out in autocannon (0: never).
 */
const GATEWAY_PAUSE_MS = Number(process.env.BENCH_GATEWAY_PAUSE_MS ?? 0);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 200);
const BATCH_REQUESTS = Number(process.env.BENCH_BATCH_REQUESTS ?? 40);
const BATCH_RECIPIENTS = Number(process.env.BENCH_BATCH_RECIPIENTS ?? 100);
const BATCH_CONNECTIONS = Number(process.env.BENCH_BATCH_CONNECTIONS ?? 4);
const PROFILE = process.env.BENCH_PROFILE !== '0';
const FLOOR_EMAILS = Number(process.env.BENCH_FLOOR_EMAILS ?? 4000);
const PHASES = new Set(
  (process.env.BENCH_PHASES ?? 'single,drain,batch,spread,ceiling,copy,floor,floors')
    .split(',')
    .map((s) => s.trim()),
);
/** Phases that need none of the pipeline's services (floors brings its own database and vhost). */
const IN_PROCESS = new Set(['copy', 'floor', 'floors']);
const AIMS = { single_per_sec: 1000, single_p99_ms: 50, batch_per_sec: 2000 };
const KEY = 'myk_bench_send_bootstrap_key_0123456789abcdef';
/** Runs a webhook dispatcher beside the pipeline (the tenant's MAIL_DELIVERED to a receiver here). */
const DISPATCHER = process.env.BENCH_DISPATCHER === '1';

const round = (n: number, d = 2) => Number(n.toFixed(d));

/** CPU ms per email of each group, and their sum (RabbitMQ and other PostgreSQL work are shared). */
function perEmail(cpuMs: Record<string, number>, emails: number) {
  const per = Object.fromEntries(Object.entries(cpuMs).map(([k, v]) => [k, round(v / emails)]));
  const pipeline = Object.entries(cpuMs)
    .filter(
      ([k]) =>
        ['gateway', 'postgresql', 'rabbitmq', 'redis', 'webhook_dispatcher'].includes(k) ||
        k.startsWith('send'),
    )
    .reduce((s, [, v]) => s + v, 0);
  return { ...per, pipeline_total: round(pipeline / emails) };
}

/** The floor phase: its own smtp-sink, the send service's defaults (SEND_CONCURRENCY, SEND_POOL_CONNECTIONS). */
async function floorPhase(key: DkimKeyPair, mailerId: string) {
  const sink = await startSmtpSink({ backlog: 1024 });
  try {
    return await floorCost({
      body: (i) => batchBody(mailerId, i, BATCH_RECIPIENTS),
      key,
      domain: DOMAIN,
      sinkPort: sink.port,
      emails: FLOOR_EMAILS,
      recipients: BATCH_RECIPIENTS,
      concurrency: 64,
      connections: 8,
    });
  } finally {
    await sink.stop();
  }
}

/** BENCH_PHASES of only copy/floor: this process alone, no servers. */
async function inProcessOnly(stamp: number): Promise<void> {
  const key = dkimKeyPair();
  const report: Record<string, unknown> = {
    benchmark: 'send',
    at: new Date(stamp).toISOString(),
    machine: { cpus: cpus().length, loadavg_at_start: loadavg().map((l) => round(l)) },
    note: 'in-process phases only: the send service code in this process, no database, bus or services',
    ...servicesForm(),
  };
  if (PHASES.has('copy')) report.copy = await copyCost((i) => singleBody('floor', i), key, DOMAIN);
  if (PHASES.has('floor')) report.floor = await floorPhase(key, 'floor');
  if (PHASES.has('floors')) report.floors = await floors(key, 'floor', report);
  report.machine = { ...(report.machine as object), loadavg_at_end: loadavg().map((l) => round(l)) };
  printAndKeep('send', report, stamp);
  printFloorsSummary(report);
}

/**
 * The floors phase (bench/floors/floors.ts) with this run's bodies and settings; the single and
 * batch figures of the same run (when they ran) are put beside its budget.
 */
async function floors(key: DkimKeyPair, mailerId: string, report: Record<string, unknown>) {
  const result = await floorsPhase({
    singleBody: (i) => singleBody(mailerId, i),
    batchBody: (i) => batchBody(mailerId, i, BATCH_RECIPIENTS),
    key,
    domain: DOMAIN,
    connections: CONNECTIONS,
    batchConnections: BATCH_CONNECTIONS,
    recipients: BATCH_RECIPIENTS,
    copyEmails: FLOOR_EMAILS,
    aims: AIMS,
  });
  type Phase = {
    delivered_per_sec: number;
    api: Record<string, number>;
    cpu_ms_per_email: Record<string, number>;
  };
  const pipeline = (name: string) => {
    const p = report[name] as Phase | undefined;
    if (!p) return undefined;
    const floorTotal = result.budget[name]!.total_cpu_ms_per_email;
    const measured = p.cpu_ms_per_email.pipeline_total ?? 0;
    const client = p.cpu_ms_per_email.bench_client ?? 0;
    const sink = p.cpu_ms_per_email.smtp_sink ?? 0;
    return {
      delivered_per_sec: p.delivered_per_sec,
      api: p.api,
      cpu_ms_per_email: p.cpu_ms_per_email,
      // Same scope as the floors' total: the pipeline's processes plus the bench client and the sink.
      cpu_ms_per_email_with_client_and_sink: round(measured + client + sink),
      ratio_to_floors: round((measured + client + sink) / floorTotal),
    };
  };
  return { ...result, pipeline_same_run: { single: pipeline('single'), batch: pipeline('batch') } };
}

/** The floors' human summary (the JSON is on stdout). */
function printFloorsSummary(report: Record<string, unknown>): void {
  const f = report.floors as { summary: string[]; pipeline_same_run: Record<string, unknown> } | undefined;
  if (!f) return;
  const lines = ['', 'floors (issue 14):', ...f.summary];
  for (const [name, p] of Object.entries(f.pipeline_same_run)) {
    const q = p as
      | { delivered_per_sec: number; cpu_ms_per_email_with_client_and_sink: number; ratio_to_floors: number }
      | undefined;
    if (q)
      lines.push(
        `  pipeline ${name} in this run: ${q.delivered_per_sec} delivered/s at ${q.cpu_ms_per_email_with_client_and_sink} CPU-ms per email (client and sink included), ${q.ratio_to_floors}x the floors`,
      );
  }
  process.stderr.write(`${lines.join('\n')}\n`);
}

/** Stops `s`'s process for `ms` once, 500 ms from now (BENCH_GATEWAY_PAUSE_MS). */
async function pauseOnce(s: Service, ms: number): Promise<void> {
  await new Promise((r) => setTimeout(r, 500));
  process.kill(s.proc.child.pid!, 'SIGSTOP');
  await new Promise((r) => setTimeout(r, ms));
  process.kill(s.proc.child.pid!, 'SIGCONT');
}

async function main(): Promise<void> {
  const stamp = Date.now();
  if ([...PHASES].every((p) => IN_PROCESS.has(p))) return inProcessOnly(stamp);
  const resultsDir = RESULTS;
  const profileRoot = PROFILE ? join(resultsDir, `send-${stamp}-profiles`) : null;
  const servers = await createBenchServers();
  const { db } = servers;
  if (process.env.BENCH_AUTO_EXPLAIN_MS) {
    // Diagnosis: plans of this database's statements slower than that go to the server's log.
    const admin = await benchClient(db.url);
    const ms = Number(process.env.BENCH_AUTO_EXPLAIN_MS);
    await admin.query(`ALTER DATABASE ${db.name} SET session_preload_libraries = 'auto_explain'`);
    await admin.query(`ALTER DATABASE ${db.name} SET auto_explain.log_min_duration = ${ms}`);
    await admin.query(`ALTER DATABASE ${db.name} SET auto_explain.log_analyze = on`);
    await admin.end();
  }
  const sink = await startSmtpSink({ backlog: 1024 });
  const ceilingSink = await startSmtpSink({ backlog: 1024 });
  const stores = {
    ...benchServiceEnv(servers),
    // Outbox rows deleted as they are published (the setting docs/scaling.md recommends for volume).
    OUTBOX_RETENTION_MS: process.env.BENCH_OUTBOX_RETENTION_MS ?? '0',
  };
  const sendEnv = {
    ...stores,
    SMTP_RELAY_URL: `smtp://127.0.0.1:${sink.port}`,
    ...envList(process.env.BENCH_SEND_ENV),
  };
  const services: Service[] = [];
  let sendCount = 0;
  const startSend = async () => {
    const s = await spawnService(
      `send-${++sendCount}`,
      'send',
      sendEnv,
      profileRoot,
      /Mailyard send started/,
    );
    services.push(s);
    return s;
  };
  const stop = async (s: Service) => {
    await stopService(s);
    services.splice(services.indexOf(s), 1);
  };
  const schema = await migrateAsServices(db.url);
  const ctx = await openHarnessContext(stores);
  const client = await benchClient(db.url);
  const report: Record<string, unknown> = {
    benchmark: 'send',
    at: new Date(stamp).toISOString(),
    machine: { cpus: cpus().length, loadavg_at_start: loadavg().map((l) => round(l)) },
    note: 'shared machine: compare figures as ratios to smtp_ceiling of the same run; CPU-ms per email is the steadier guide',
    transport: 'domain mailer, DKIM rsa-sha256 2048, SMTP_RELAY_URL -> Postfix smtp-sink',
    send_service_env: envList(process.env.BENCH_SEND_ENV),
    gateway_env: envList(process.env.BENCH_GATEWAY_ENV),
    ...servicesForm(),
    schema: `migrations of the services measured, last ${schema.at(-1)}`,
    outbox_retention_ms: Number(stores.OUTBOX_RETENTION_MS),
    webhook_dispatcher: DISPATCHER ? 'MAIL_DELIVERED posted to a receiver in the bench process' : 'none',
  };
  const windows: Array<{ phase: string; window: Window; processes: string[] }> = [];
  /** Phases whose account shows a broken promise (the run exits non-zero after its report). */
  const losses: string[] = [];
  let receiver: WebhookReceiver | null = null;
  try {
    // The send service first, so its queue is bound before the gateway publishes commands.
    let senders = [await startSend()];
    const { gateway, port: gwPort } = await spawnBootstrapGateway(
      stores,
      KEY,
      { ...envList(process.env.BENCH_GATEWAY_ENV) },
      profileRoot,
    );
    services.push(gateway);

    const tenantId = await bootstrapTenantId(ctx, KEY);
    const key = dkimKeyPair();
    const mailerId = await insertDomainMailer(ctx.db, ctx.sealer, tenantId, { domain: DOMAIN, key });

    // With BENCH_DISPATCHER: the tenant's MAIL_DELIVERED events posted to a receiver in this process.
    receiver = DISPATCHER ? await startWebhookReceiver() : null;
    let dispatcher: Service | null = null;
    if (receiver) {
      await webhooks.create(ctx.db, tenantId, {
        id: newId(IdPrefix.emailEventsWebhook),
        event: 'EMAIL_EVENT',
        url: receiver.url('/events'),
        events: Object.fromEntries(WEBHOOK_EVENT_TOGGLES.map((t) => [t, t === 'delivery'])) as never,
        headerNames: [],
        headersSealed: null,
        secretSealed: ctx.sealer.seal(`whsec_${Buffer.alloc(32, 1).toString('base64')}`),
      });
      dispatcher = await spawnService(
        'webhook_dispatcher',
        'webhook-dispatcher',
        { ...stores, WEBHOOK_ALLOW_INSECURE: '1' },
        profileRoot,
        /webhook-dispatcher: consuming/,
      );
      services.push(dispatcher);
    }
    const posted = () =>
      (receiver?.requests ?? []).reduce((n, r) => n + (Array.isArray(r.json) ? r.json.length : 0), 0);

    const url = `http://127.0.0.1:${gwPort}/v1/email/send`;
    const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
    let n = 0;
    let b = 0;
    /** `amount` requests; each one's fate goes to a new ledger (ledger.ts). */
    const load = async (amount: number, connections: number, ledgerOf: () => RequestLedger) => {
      const ledger = ledgerOf();
      const result = await autocannon({
        url,
        method: 'POST',
        headers,
        connections,
        amount,
        timeout: API_TIMEOUT_S,
        requests: [ledger.request()],
      });
      return { ...result, ledger };
    };
    const single = () =>
      new RequestLedger(
        'i',
        () => n++,
        (i) => singleBody(mailerId, i),
      );
    const batch = () =>
      new RequestLedger(
        'batch',
        () => b++,
        (i) => batchBody(mailerId, i, BATCH_RECIPIENTS),
      );
    let expected = 0;
    const delivered = async (target: number, timeoutMs = 600_000) => {
      await waitDelivered(client, tenantId, target, timeoutMs);
      // With a dispatcher, an email is done when its MAIL_DELIVERED was posted.
      const until = Date.now() + timeoutMs;
      while (receiver && posted() < target && Date.now() < until) await new Promise((r) => setTimeout(r, 25));
    };
    /** Rows written to the outbox so far: every bus message this pipeline publishes is one. */
    const outboxRows = async () =>
      Number(
        (await client.query<{ n: string }>('SELECT last_value::text AS n FROM outbox_id_seq')).rows[0]!.n,
      );
    const meter = (extra: Service[]) =>
      new CpuMeter({
        gateway: () => processTree(gateway.proc.child.pid!),
        ...Object.fromEntries(extra.map((s) => [s.label, () => processTree(s.proc.child.pid!)])),
        postgresql: () => pipelineBackends(client, db.name),
        postgresql_other: () => pidsByName('postgres'),
        rabbitmq: rabbitmqServerPids,
        redis: () => pidsByName('redis-server'),
        smtp_sink: () => pidsByName('smtp-sink'),
        bench_client: () => [process.pid],
      });
    const walLsn = async () =>
      (await client.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0]!.lsn;
    const walSince = async (lsn: string) =>
      Number(
        (
          await client.query<{ d: string }>(
            'SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::text AS d',
            [lsn],
          )
        ).rows[0]!.d,
      );
    /** Runs `work` as a measured phase: wall time, CPU per email, the profile window. */
    const measured = async <T>(phase: string, emails: number, given: Service[], work: () => Promise<T>) => {
      const procs = dispatcher ? [...given, dispatcher] : given;
      const m = meter(procs.filter((s) => s !== gateway));
      const counters0 = await Promise.all(procs.map(countersOf));
      const wal0 = await walLsn();
      const outbox0 = await outboxRows();
      await m.start();
      const fromUs = monotonicUs();
      const t0 = Date.now();
      const result = await work();
      const seconds = (Date.now() - t0) / 1000;
      const cpu = await m.stop();
      const walBytes = await walSince(wal0);
      const outboxWritten = (await outboxRows()) - outbox0;
      const counters1 = await Promise.all(procs.map(countersOf));
      const perProcess = (k: 'statements' | 'transactions' | 'delivered', per = emails) =>
        Object.fromEntries(
          procs.map((s, i) => [s.label, round((counters1[i]![k] - counters0[i]![k]) / per)]),
        );
      windows.push({ phase, window: { fromUs, toUs: monotonicUs() }, processes: procs.map((s) => s.label) });
      return {
        result,
        seconds,
        // The figures every phase reports, in this order.
        figures: {
          delivered_per_sec: Math.round(emails / seconds),
          seconds: round(seconds),
          cpu_ms_per_email: perEmail(cpu, emails),
          db_statements_per_email: perProcess('statements'),
          db_transactions_per_email: perProcess('transactions'),
          // Server-wide (the server is shared with other sessions): an upper bound.
          wal_bytes_per_email: Math.round(walBytes / emails),
          // Bus messages published per email: one send command per copy, the rest email events.
          bus_messages_per_email: round(outboxWritten / emails, 3),
        },
        delivered_by_process: perProcess('delivered', 1),
        cpu_seconds: Object.fromEntries(Object.entries(cpu).map(([k, v]) => [k, round(v / 1000)])),
      };
    };

    // Warm-up: JIT, pools, DKIM key cache, SMTP connections.
    expected += await committedEmails(client, tenantId, (await load(WARMUP, 10, single)).ledger);
    await delivered(expected, 120_000);
    // A fresh database has no statistics until autovacuum's first pass (up to a minute), and the
    // services' prepared statements keep the generic plans made for empty tables (an index walk
    // over all of a tenant's log rows per copy) until then. Production tables have statistics:
    // give these theirs (ANALYZE also invalidates the cached plans).
    await client.query('ANALYZE');

    /** A measured phase of `requests` API requests carrying `emails` emails, until all are delivered. */
    const loadPhase = async (
      phase: string,
      procs: Service[],
      load$: { requests: number; connections: number; body: () => RequestLedger; emails: number },
    ) => {
      let apiSeconds = 0;
      let waitError: string | undefined;
      const m = await measured(phase, load$.emails, [gateway, ...procs], async () => {
        const t0 = Date.now();
        const pause =
          phase === 'single' && GATEWAY_PAUSE_MS > 0 ? pauseOnce(gateway, GATEWAY_PAUSE_MS) : null;
        const api = await load(load$.requests, load$.connections, load$.body);
        await pause;
        apiSeconds = (Date.now() - t0) / 1000;
        // What was committed is what must be delivered (a timed-out request may be among it,
        // a request answered 2xx must be): not the number of requests sent.
        expected += await committedEmails(client, tenantId, api.ledger);
        await delivered(expected).catch((err: Error) => {
          waitError = err.message;
        });
        return api;
      });
      const accounting = await account(client, tenantId, m.result.ledger);
      if (waitError || lossIn(accounting)) losses.push(phase);
      expected = await countDelivered(client, tenantId); // the next phase's wait starts from what is
      return {
        ...m,
        apiSeconds,
        accounting: {
          ...accounting,
          autocannon: { timeouts: m.result.timeouts, errors: m.result.errors, non2xx: m.result.non2xx },
          ...(waitError ? { delivery_wait: waitError } : {}),
        },
      };
    };

    if (PHASES.has('single')) {
      const m = await loadPhase('single', senders, {
        requests: EMAILS,
        connections: CONNECTIONS,
        body: single,
        emails: EMAILS,
      });
      const tApi = m.apiSeconds;
      report.single = {
        accounting: m.accounting,
        emails: EMAILS,
        api_connections: CONNECTIONS,
        api_timeout_s: API_TIMEOUT_S,
        ...(GATEWAY_PAUSE_MS > 0 ? { gateway_paused_ms: GATEWAY_PAUSE_MS } : {}),
        api: {
          accepted_per_sec: Math.round(EMAILS / tApi),
          p50_ms: m.result.latency.p50,
          p99_ms: m.result.latency.p99,
          non_2xx: m.result.non2xx,
          // autocannon counts a timeout among its errors too: errors = timeouts + connection errors.
          errors: m.result.errors,
        },
        ...m.figures,
        cpu_seconds: m.cpu_seconds,
      };
    }

    if (PHASES.has('drain')) {
      // Commands queued while the send service is stopped, then drained by a fresh one.
      for (const s of senders) await stop(s);
      const queued = await load(EMAILS, CONNECTIONS, single);
      const before = await countDelivered(client, tenantId);
      const fresh = await startSend();
      senders = [fresh];
      expected += await committedEmails(client, tenantId, queued.ledger);
      await delivered(before + 1, 120_000);
      const m = await measured('drain', EMAILS, senders, () => delivered(expected));
      const accounting = await account(client, tenantId, queued.ledger);
      if (lossIn(accounting)) losses.push('drain');
      report.drain = {
        note: 'commands queued while the send service was stopped, then drained by a new one; gateway idle',
        accepted_while_stopped: EMAILS - queued.non2xx,
        accounting,
        ...m.figures,
      };
    }

    const batchEmails = BATCH_REQUESTS * BATCH_RECIPIENTS;
    const runBatch = async (phase: string, procs: Service[]) => {
      const m = await loadPhase(phase, procs, {
        requests: BATCH_REQUESTS,
        connections: BATCH_CONNECTIONS,
        body: batch,
        emails: batchEmails,
      });
      const tApi = m.apiSeconds;
      return {
        requests: BATCH_REQUESTS,
        recipients_per_request: BATCH_RECIPIENTS,
        emails: batchEmails,
        accounting: m.accounting,
        api: {
          requests_per_sec: round(BATCH_REQUESTS / tApi, 1),
          p50_ms: m.result.latency.p50,
          p99_ms: m.result.latency.p99,
          non_2xx: m.result.non2xx,
        },
        ...m.figures,
        delivered_by_process: Object.fromEntries(
          Object.entries(m.delivered_by_process).filter(([k]) => k !== 'gateway'),
        ),
        cpu_seconds: m.cpu_seconds,
      };
    };

    if (PHASES.has('batch')) report.batch = await runBatch('batch', senders);

    if (PHASES.has('spread')) {
      // A second send service on the same broker and queue: the work spreads across both.
      senders = [...senders, await startSend()];
      // Warm the new process up (JIT, pools) with one batch before measuring.
      expected += await committedEmails(client, tenantId, (await load(1, 1, batch)).ledger);
      await delivered(expected, 120_000);
      const result = await runBatch('spread', senders);
      report.spread = {
        send_services: senders.length,
        ...result,
        // Each process's CPU over the emails it delivered itself.
        cpu_ms_per_email_handled: Object.fromEntries(
          senders.map((s) => {
            const cpuMs = (result.cpu_seconds[s.label] ?? 0) * 1000;
            return [s.label, round(cpuMs / Math.max(1, result.delivered_by_process[s.label] ?? 0))];
          }),
        ),
      };
    }

    if (PHASES.has('ceiling')) {
      // The machine's SMTP ceiling: Postfix's load generator into the same kind of sink.
      const s0 = Date.now();
      await run('smtp-source', ['-s', '20', '-m', String(EMAILS), `127.0.0.1:${ceilingSink.port}`]);
      const seconds = (Date.now() - s0) / 1000;
      const perSec = EMAILS / seconds;
      report.smtp_ceiling = {
        command: `smtp-source -s 20 -m ${EMAILS} 127.0.0.1:<port>  (-> smtp-sink)`,
        msgs_per_sec: Math.round(perSec),
        seconds: round(seconds),
      };
      const ratio = (phase: string) => {
        const r = report[phase] as { delivered_per_sec?: number } | undefined;
        return r?.delivered_per_sec ? round(r.delivered_per_sec / perSec, 3) : undefined;
      };
      report.ratio_to_ceiling = { single: ratio('single'), batch: ratio('batch'), spread: ratio('spread') };
    }
    if (PHASES.has('copy')) report.copy = await copyCost((i) => singleBody(mailerId, i), key, DOMAIN);
    if (PHASES.has('floor')) report.floor = await floorPhase(key, mailerId);

    // Which tables were scanned how (a sequential scan on a hot path shows here).
    const { rows: tables } = await client.query(
      `SELECT relname AS table, seq_scan, seq_tup_read, idx_scan, n_tup_ins AS inserted, n_tup_upd AS updated,
              n_tup_hot_upd AS hot_updated, n_tup_del AS deleted, n_dead_tup AS dead
         FROM pg_stat_user_tables WHERE n_tup_ins + n_tup_upd + n_tup_del > 0 ORDER BY relname`,
    );
    report.postgresql_tables = tables;
    // Which index served how many scans: an index written per email and never scanned is a
    // cost with no reader (docs/scaling.md, rows, indexes and WAL per email).
    const { rows: indexes } = await client.query<{ index: string; scans: number }>(
      `SELECT relname || '.' || indexrelname AS index, idx_scan::int AS scans FROM pg_stat_user_indexes
        WHERE relname IN ('sends', 'email_logs', 'email_events', 'outbox') ORDER BY relname, indexrelname`,
    );
    report.postgresql_index_scans = Object.fromEntries(indexes.map((r) => [r.index, r.scans]));
    // Storage per email (tables and their indexes), for retention sizing.
    const { rows: sizes } = await client.query<{ table: string; bytes: string }>(
      `SELECT relname AS table, pg_total_relation_size(relid)::text AS bytes FROM pg_stat_user_tables
        WHERE relname IN ('sends', 'email_logs', 'email_events', 'outbox') ORDER BY relname`,
    );
    const total = await countDelivered(client, tenantId);
    report.postgresql_bytes_per_email = Object.fromEntries(
      sizes.map((r) => [r.table, Math.round(Number(r.bytes) / Math.max(1, total))]),
    );
    if (PHASES.has('floors')) {
      // Alone on the machine as far as this run goes: the pipeline's services are stopped first.
      for (const s of [...services].reverse()) await stopService(s);
      services.length = 0;
      report.floors = await floors(key, mailerId, report);
    }
    report.machine = { ...(report.machine as object), loadavg_at_end: loadavg().map((l) => round(l)) };
    report.aims = { single_delivered_per_sec: 1000, single_accept_p99_ms: 50, batch_delivered_per_sec: 2000 };
  } finally {
    const all = [...services];
    for (const s of all.reverse()) await stopService(s);
    await client.end();
    await receiver?.close();
    await closeContext(ctx);
    await sink.stop();
    await ceilingSink.stop();
    await servers.drop();
  }

  mkdirSync(resultsDir, { recursive: true });
  if (profileRoot) {
    // Profiles are written by each process at exit; summarized per phase over its window.
    const sections: string[] = [];
    const profiles: Record<string, Record<string, ProfileSummary>> = {};
    for (const { phase, window, processes } of windows) {
      const summaries: Record<string, ProfileSummary> = {};
      for (const label of processes) {
        const found = readProfiles(join(profileRoot, label));
        if (found.length > 0) summaries[label] = summarize(found, SERVICES_ROOT, window);
      }
      profiles[phase] = summaries;
      sections.push(summaryText(`phase ${phase}`, summaries));
    }
    writeFileSync(join(resultsDir, `send-${stamp}.profile.md`), sections.join('\n'));
    report.profile_summary = `bench/results/send-${stamp}.profile.md`;
  }
  printAndKeep('send', report, stamp);
  printFloorsSummary(report);
  if (losses.length > 0) {
    console.error(
      `accepted emails not delivered in phase(s) ${losses.join(', ')}: see each phase's accounting`,
    );
    process.exitCode = 1;
  }
}

runMain(main);
