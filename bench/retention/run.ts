/**
 * Retention benchmark (issue 26, "a sweep deleting 1,000,000 expired rows while sends run: send
 * accept p99 and delivered/s within 20 % of the same load without the sweep, measured in the same
 * run"). On the real PostgreSQL, RabbitMQ and Redis, as bench:send runs them: a gateway and a send
 * service in their own processes, a domain mailer (DKIM) relaying to Postfix's smtp-sink.
 *
 *   1. seeds BENCH_EXPIRED (1,000,000) expired, finished rows (seed.ts) of another tenant;
 *   2. runs the same send load in alternating phases of BENCH_SECONDS (20) each, `base` and `sweep`,
 *      BENCH_ROUNDS (4) times and a last `base`: single-recipient sends over BENCH_CONNECTIONS (20)
 *      connections (BENCH_RATE: a fixed rate in requests/s instead of as fast as answered). One
 *      retention sweep (services/gateway/src/retention/sweep.ts, the defaults of RETENTION_* and of
 *      the sweep: batches of BENCH_SWEEP_BATCH (250), BENCH_SWEEP_PAUSE_MS (20) and at most BENCH_SWEEP_DUTY (0.2) of the time busy) runs
 *      during the `sweep` phases' load only and waits between batches otherwise, so base and sweep
 *      alternate over the same seeded rows and the drift of a shared machine falls on both; each
 *      phase waits until every accepted email is delivered before the next starts;
 *   3. reports per phase the accept p50/p99 (autocannon), accepted/s and delivered/s (the load
 *      tenant's log rows whose delivery time falls in the phase's window), the sweep's rows per
 *      table, its own running time, and the ratios sweep / base: of the means, and per sweep phase
 *      against the mean of its two neighbouring base phases, with their median (what the aim is
 *      judged by, as drift of a shared machine cancels out of it; sweep phases counted only when
 *      the sweep ran throughout). The aim: p99 ratio <= 1.2, delivered/s ratio >= 0.8.
 *
 * The gateway's own sweeper is set to keep everything for 100 years (it finds nothing); the sweep
 * runs in this process on its own connection, as the gateway would run it: same statements.
 *
 *   pnpm bench:retention
 *   BENCH_EXPIRED=200000 BENCH_SECONDS=10 BENCH_ROUNDS=2 pnpm bench:retention
 */
import { cpus, loadavg } from 'node:os';
import { sweepExpired } from '@mailyard/gateway/src/retention/sweep';
import { closeContext, createLogger } from '@mailyard/platform';
import type { RetentionSetting } from '@mailyard/store';
import { dkimKeyPair, insertDomainMailer } from '@mailyard/testkit/fixtures';
import { startSmtpSink } from '@mailyard/testkit/peers/smtp-sink';
import autocannon from 'autocannon';
import {
  DOMAIN,
  type Service,
  benchClient,
  singleBody,
  spawnBootstrapGateway,
  spawnService,
  stopService,
} from '../send/pipeline';
import { printAndKeep, runMain } from '../support/proc';
import {
  benchServiceEnv,
  bootstrapTenantId,
  createBenchServers,
  openHarnessContext,
} from '../support/servers';
import { migrateAsServices, servicesForm } from '../support/services';
import { seedExpired } from './seed';

const EXPIRED = Number(process.env.BENCH_EXPIRED ?? 1_000_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 20);
const RATE = process.env.BENCH_RATE ? Number(process.env.BENCH_RATE) : undefined;
const SWEEP_BATCH = Number(process.env.BENCH_SWEEP_BATCH ?? 250);
const SWEEP_PAUSE_MS = Number(process.env.BENCH_SWEEP_PAUSE_MS ?? 20);
const SWEEP_DUTY = Number(process.env.BENCH_SWEEP_DUTY ?? 0.2);
const KEY = 'myk_bench_retention_bootstrap_key_0123456789';
const DAY = 86_400_000;
/** The defaults of services/gateway/src/retention/settings.ts. */
const DEFAULTS: Record<RetentionSetting, number> = {
  RETENTION_LOGS: 30 * DAY,
  RETENTION_EVENTS: 30 * DAY,
  RETENTION_INBOUND_RAW: 7 * DAY,
  RETENTION_WEBHOOK_DELIVERIES: 30 * DAY,
  RETENTION_AUDIT: 365 * DAY,
  RETENTION_REPORTS: 180 * DAY,
};
const KEEP_ALL = '36500d';

const round = (n: number, d = 2) => Math.round(n * 10 ** d) / 10 ** d;

async function main(): Promise<void> {
  const stamp = Date.now();
  const servers = await createBenchServers();
  const { db } = servers;
  const sink = await startSmtpSink({ backlog: 1024 });
  const stores = benchServiceEnv(servers);
  const schema = await migrateAsServices(db.url);
  const ctx = await openHarnessContext(stores);
  const client = await benchClient(db.url);
  const services: Service[] = [];
  try {
    const seeded = await seedExpired(client, EXPIRED);
    process.stderr.write(`seeded ${EXPIRED} expired rows in ${seeded.seconds} s\n`);
    services.push(
      await spawnService(
        'send',
        'send',
        { ...stores, SMTP_RELAY_URL: `smtp://127.0.0.1:${sink.port}` },
        null,
        /Mailyard send started/,
      ),
    );
    const { gateway, port: gwPort } = await spawnBootstrapGateway(
      stores,
      KEY,
      {
        RETENTION_LOGS: KEEP_ALL,
        RETENTION_EVENTS: KEEP_ALL,
        RETENTION_INBOUND_RAW: KEEP_ALL,
        RETENTION_WEBHOOK_DELIVERIES: KEEP_ALL,
        RETENTION_AUDIT: KEEP_ALL,
        RETENTION_REPORTS: KEEP_ALL,
        RETENTION_SWEEP_INTERVAL: KEEP_ALL,
      },
      null,
    );
    services.push(gateway);
    const tenantId = await bootstrapTenantId(ctx, KEY);
    const mailerId = await insertDomainMailer(ctx.db, ctx.sealer, tenantId, {
      domain: DOMAIN,
      key: dkimKeyPair(),
    });

    let n = 0;
    const countOf = async (sql: string, params: unknown[]) =>
      (await client.query<{ n: number }>(sql, params)).rows[0]!.n;
    const accepted = () =>
      countOf('SELECT count(*)::int AS n FROM email_logs WHERE tenant_id = $1', [tenantId]);
    const pending = () =>
      countOf('SELECT count(*)::int AS n FROM email_logs WHERE tenant_id = $1 AND send_outcome IS NULL', [
        tenantId,
      ]);
    const drained = async () => {
      const deadline = Date.now() + 600_000;
      while ((await pending()) > 0) {
        if (Date.now() > deadline) throw new Error('sends not delivered within 10 minutes');
        await new Promise((r) => setTimeout(r, 250));
      }
    };
    const load = (seconds: number) =>
      autocannon({
        url: `http://127.0.0.1:${gwPort}/v1/email/send`,
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        connections: CONNECTIONS,
        duration: seconds,
        ...(RATE ? { overallRate: RATE } : {}),
        timeout: 10,
        requests: [{ setupRequest: (r) => ({ ...r, body: singleBody(mailerId, n++) }) }],
      });
    const phase = async (name: string, during?: () => Promise<unknown>) => {
      const before = await accepted();
      const t0 = new Date();
      const result = await load(SECONDS);
      const t1 = new Date();
      await during?.();
      await drained();
      const delivered = await countOf(
        `SELECT count(*)::int AS n FROM email_logs
          WHERE tenant_id = $1 AND delivered_at >= $2 AND delivered_at < $3`,
        [tenantId, t0, t1],
      );
      const window = (t1.getTime() - t0.getTime()) / 1000;
      return {
        phase: name,
        seconds: round(window, 1),
        accepted: (await accepted()) - before,
        accepted_per_sec: round(result['2xx'] / window, 1),
        delivered_per_sec: round(delivered / window, 1),
        p50_ms: result.latency.p50,
        p99_ms: result.latency.p99,
        non_2xx: result.non2xx,
        errors: result.errors,
      };
    };

    // Warm-up: JIT, pools, the first sends' statistics.
    await load(5);
    await drained();
    // The sweep runs only while a `sweep` phase's load runs: between its batches it waits while
    // paused (onBatch), so base and sweep phases alternate over the same seeded rows and drift of
    // a shared machine falls on both alike.
    let paused = true;
    let resume: () => void = () => {};
    let gate = new Promise<void>((r) => {
      resume = r;
    });
    const pause = () => {
      paused = true;
      gate = new Promise<void>((r) => {
        resume = r;
      });
    };
    let sweepEnded = false;
    let waitedMs = 0;
    const sweeping = sweepExpired({
      db: ctx.db,
      logger: createLogger('bench-sweep', 'error'),
      durations: DEFAULTS,
      batchSize: SWEEP_BATCH,
      pauseMs: SWEEP_PAUSE_MS,
      duty: SWEEP_DUTY,
      onBatch: async () => {
        const w0 = Date.now();
        while (paused) await gate;
        waitedMs += Date.now() - w0;
      },
    }).then((r) => {
      sweepEnded = true;
      return r;
    });
    const phases: Array<Awaited<ReturnType<typeof phase>> & { sweep_ran_throughout?: boolean }> = [];
    for (let i = 0; i < ROUNDS; i++) {
      phases.push(await phase('base'));
      paused = false;
      resume();
      const withSweep = await phase('sweep', async () => {
        pause();
      });
      phases.push({ ...withSweep, sweep_ran_throughout: !sweepEnded });
    }
    phases.push(await phase('base'));
    paused = false;
    resume();
    const sweep = await sweeping;
    const left = await countOf(
      `SELECT (SELECT count(*) FROM email_logs WHERE created_at < now() - interval '30 days')
            + (SELECT count(*) FROM sends WHERE created_at < now() - interval '30 days')
            + (SELECT count(*) FROM email_events WHERE event_at < now() - interval '30 days')
            + (SELECT count(*) FROM webhook_deliveries WHERE created_at < now() - interval '30 days')
            + (SELECT count(*) FROM inbound_messages WHERE received_at < now() - interval '7 days') AS n`,
      [],
    );
    // The sweep's own time, without its waits while paused.
    const sweepSeconds = (sweep.ms - waitedMs) / 1000;
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
    const bases = phases.filter((p) => p.phase === 'base');
    const sweeps = phases.filter((p) => p.phase === 'sweep' && p.sweep_ran_throughout);
    const of = (ps: typeof phases) => ({
      p99_ms: round(mean(ps.map((p) => p.p99_ms)), 1),
      delivered_per_sec: round(mean(ps.map((p) => p.delivered_per_sec)), 1),
      accepted_per_sec: round(mean(ps.map((p) => p.accepted_per_sec)), 1),
    });
    const base = of(bases);
    const swept = of(sweeps);
    const removed = Object.values(sweep.removed).reduce((a, b) => a + b, 0);
    // Each sweep phase against the mean of the base phases just before and after it: the drift of
    // a shared machine over the run (other work starting or ending) cancels out of these.
    const median = (xs: number[]) => {
      const v = [...xs].sort((a, b) => a - b);
      return v.length === 0 ? Number.NaN : (v[(v.length - 1) >> 1]! + v[v.length >> 1]!) / 2;
    };
    const paired = phases.flatMap((p, i) => {
      if (p.phase !== 'sweep' || !p.sweep_ran_throughout) return [];
      const [a, b] = [phases[i - 1]!, phases[i + 1]!];
      return [
        {
          accept_p99: round(p.p99_ms / ((a.p99_ms + b.p99_ms) / 2)),
          delivered_per_sec: round(p.delivered_per_sec / ((a.delivered_per_sec + b.delivered_per_sec) / 2)),
        },
      ];
    });
    const pairedMedian = {
      accept_p99_sweep_over_base: round(median(paired.map((r) => r.accept_p99))),
      delivered_per_sec_sweep_over_base: round(median(paired.map((r) => r.delivered_per_sec))),
    };
    const ratios = {
      accept_p99_sweep_over_base: round(swept.p99_ms / base.p99_ms),
      delivered_per_sec_sweep_over_base: round(swept.delivered_per_sec / base.delivered_per_sec),
      accepted_per_sec_sweep_over_base: round(swept.accepted_per_sec / base.accepted_per_sec),
    };
    printAndKeep(
      'retention',
      {
        benchmark: 'retention',
        at: new Date(stamp).toISOString(),
        machine: { cpus: cpus().length, loadavg_at_end: loadavg().map((l) => round(l)) },
        ...servicesForm(),
        schema: `migrations of the services measured, last ${schema.at(-1)}`,
        load: { seconds: SECONDS, connections: CONNECTIONS, rate: RATE ?? 'as fast as answered' },
        seeded,
        sweep: {
          batch: SWEEP_BATCH,
          pause_ms: SWEEP_PAUSE_MS,
          duty: SWEEP_DUTY,
          removed,
          removed_per_table: sweep.removed,
          batches: sweep.batches,
          seconds_running: round(sweepSeconds, 1),
          rows_per_sec_running: Math.round(removed / sweepSeconds),
          sweep_phases_that_ran_throughout: sweeps.length,
          expired_rows_left: left,
        },
        phases,
        mean: { base, sweep: swept },
        ratios_of_means: ratios,
        paired_ratios: paired,
        paired_ratios_median: pairedMedian,
        aim: {
          note: 'paired medians (each sweep phase over its neighbouring base phases)',
          p99_within_20_percent: pairedMedian.accept_p99_sweep_over_base <= 1.2,
          delivered_within_20_percent: pairedMedian.delivered_per_sec_sweep_over_base >= 0.8,
        },
      },
      stamp,
    );
  } catch (err) {
    for (const s of services) process.stderr.write(`${s.label} output:\n${s.proc.output().slice(-3000)}\n`);
    throw err;
  } finally {
    for (const s of services.reverse()) await stopService(s);
    await client.end();
    await closeContext(ctx);
    await sink.stop();
    await servers.drop();
  }
}

runMain(main);
