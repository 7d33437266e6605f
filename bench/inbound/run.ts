/**
 * Inbound benchmark: Postfix's load generator (`smtp-source`) against the MX service running as
 * its own process (services/inbound-smtp/src/main.ts) on the real PostgreSQL, RabbitMQ and Redis;
 * every message is stored before its 250, authenticated (SPF/DKIM/DMARC against a dnsmasq that
 * holds no records), parsed into INCOMING_EMAIL and posted by a webhook-dispatcher process to a
 * local HTTP receiver in this process. Beside it, in the same run, `smtp-source` -> Postfix's
 * `smtp-sink` (accept and discard) gives the machine's SMTP ceiling, measured before and after,
 * and the same command against a bare Node smtp-server in its own process (bare-smtp-server.ts:
 * the MX's package and conversation options, accepts and discards) gives the library's floor.
 * Prints JSON and keeps a copy in bench/results/.
 *
 *   pnpm bench:inbound                                   # 2000 messages over 20 sessions
 *   BENCH_MESSAGES=5000 BENCH_SESSIONS=40 pnpm bench:inbound
 *   BENCH_INBOUND_ENV='INBOUND_MAX_PER_IP=200' pnpm bench:inbound
 *   BENCH_CPU_PROF=1 pnpm bench:inbound                  # .cpuprofile of the MX process in bench/results/
 *   BENCH_MX_NODE_ARGS='--perf-prof' pnpm bench:inbound  # node options of the MX process only
 */
import { execFile } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { promisify } from 'node:util';
import { closeContext, configFrom, createLogger, openContext } from '@mailyard/platform';
import { insertInboundDomain, newTenant } from '@mailyard/testkit/fixtures';
import { startDnsmasq } from '@mailyard/testkit/peers/dnsmasq';
import { startSmtpSink } from '@mailyard/testkit/peers/smtp-sink';
import { startWebhookReceiver } from '@mailyard/testkit/peers/webhook-receiver';
import { type Spawned, freePort, spawnTs } from '@mailyard/testkit/process';
import { createTestDatabase, createTestVhost, serverEnv } from '@mailyard/testkit/servers';
import { CpuMeter, pidsByName, processTree } from '../support/cpu';
import { RESULTS, envList, memory, printAndKeep, runMain, stopProcess } from '../support/proc';
import { servicesForm, spawnService } from '../support/services';

const run = promisify(execFile);

const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 2000);
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 20);
// V8 keeps optimising functions for the first ~2,000 messages (about 500 TurboFan compilations,
// on its compiler threads but counted in the MX process's CPU): a shorter warm-up measures that
// one-time work as a cost per message (the inbound notes in bench/history/).
const WARMUP = Number(process.env.BENCH_WARMUP ?? 2000);
/** Extra node options of the MX process only (profilers: `--perf-prof`, `--log-deopt`, ...). */
const MX_NODE_ARGS = (process.env.BENCH_MX_NODE_ARGS ?? '').split(' ').filter(Boolean);
const CPU_PROF = process.env.BENCH_CPU_PROF === '1';
const DOMAIN = 'bench-inbound.test';

/** smtp-source: `count` messages over `sessions` parallel sessions, numbered recipients; seconds taken. */
async function smtpSource(port: number, count: number, sessions: number, tag: string): Promise<number> {
  const t0 = process.hrtime.bigint();
  await run(
    'smtp-source',
    [
      '-N',
      '-s',
      String(sessions),
      '-m',
      String(count),
      '-l',
      '2048',
      '-f',
      'load@sender.example',
      '-t',
      `${tag}@${DOMAIN}`,
      '-S',
      `bench ${tag}`,
      `127.0.0.1:${port}`,
    ],
    { maxBuffer: 16 * 1024 * 1024 },
  );
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

async function sinkCeiling(port: number): Promise<{ msgs_per_sec: number; seconds: number }> {
  const seconds = await smtpSource(port, MESSAGES, SESSIONS, 'sink');
  return { msgs_per_sec: Math.round(MESSAGES / seconds), seconds: Number(seconds.toFixed(3)) };
}

/**
 * The floor: the same smtp-source command against a bare smtp-server process (bare-smtp-server.ts),
 * warmed up like the MX, its rate and its CPU-ms per message; the process is stopped afterwards.
 */
async function bareSmtpServer(
  options: { greetingDelayMs: string; maxClients: string },
  processes: Spawned[],
): Promise<{ msgs_per_sec: number; seconds: number; cpu_ms_per_message: number }> {
  const bare = spawnTs('bench/inbound/bare-smtp-server.ts', {
    BARE_GREETING_DELAY_MS: options.greetingDelayMs,
    BARE_MAX_CLIENTS: options.maxClients,
  });
  processes.push(bare);
  try {
    await bare.waitFor(/bare smtp-server listening \d+/);
    const port = Number(/bare smtp-server listening (\d+)/.exec(bare.output())![1]);
    await smtpSource(port, WARMUP, Math.min(SESSIONS, 10), 'warm');
    const meter = new CpuMeter({ bare: () => processTree(bare.child.pid!) }, { nested: true });
    await meter.start();
    const seconds = await smtpSource(port, MESSAGES, SESSIONS, 'bare');
    const { bare: ms } = await meter.stop();
    return {
      msgs_per_sec: Math.round(MESSAGES / seconds),
      seconds: Number(seconds.toFixed(3)),
      cpu_ms_per_message: Number((ms! / MESSAGES).toFixed(3)),
    };
  } finally {
    await stopProcess(bare);
    processes.splice(processes.indexOf(bare), 1);
  }
}

async function main(): Promise<void> {
  const db = await createTestDatabase();
  const vhost = createTestVhost();
  const sink = await startSmtpSink({ backlog: 1024 });
  const dns = await startDnsmasq({});
  const receiver = await startWebhookReceiver();
  const stores = {
    ...serverEnv(db, vhost),
    SERVICE_DOMAIN: 'mailyard.bench',
    LOG_LEVEL: 'warn',
    NODE_ENV: 'production',
  };
  const smtpPort = await freePort();
  const inboundEnv = {
    SMTP_PORT: String(smtpPort),
    HOST: '127.0.0.1',
    DNS_SERVERS: dns.server,
    INBOUND_MAX_PER_IP: String(Math.max(100, SESSIONS * 2)),
    INBOUND_MAX_CLIENTS: String(Math.max(200, SESSIONS * 4)),
    ...envList(process.env.BENCH_INBOUND_ENV),
  };
  const processes: Spawned[] = [];
  const ctx = await openContext(
    configFrom({ ...stores, LOG_LEVEL: 'error' }),
    createLogger('bench', 'error'),
  );
  try {
    const tenantId = await newTenant(ctx.db);
    await insertInboundDomain(ctx.db, ctx.sealer, tenantId, {
      domain: DOMAIN,
      url: receiver.url('/inbound'),
      wildcard: true,
    });
    mkdirSync(RESULTS, { recursive: true });
    const mxOps = await freePort();
    const mx = spawnService('inbound-smtp', { ...stores, ...inboundEnv, OPS_PORT: String(mxOps) }, [
      ...(CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${RESULTS}`] : []),
      ...MX_NODE_ARGS,
    ]);
    processes.push(mx);
    await mx.waitFor(/inbound SMTP smtp:\/\//, 60_000);
    const dispatcher = spawnService('webhook-dispatcher', {
      ...stores,
      OPS_PORT: String(await freePort()),
      WEBHOOK_ALLOW_INSECURE: '1',
    });
    processes.push(dispatcher);
    await dispatcher.waitFor(/webhook-dispatcher: consuming/, 60_000);

    const posted = () => receiver.to('/inbound').length;
    const waitPosted = async (n: number, timeoutMs: number): Promise<number> => {
      const deadline = Date.now() + timeoutMs;
      while (posted() < n) {
        if (Date.now() > deadline) throw new Error(`only ${posted()} of ${n} posted within ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 5));
      }
      return Date.now();
    };

    // Warm-up: JIT, pools, prepared statements; and the sink's ceiling measured before.
    await smtpSource(smtpPort, WARMUP, Math.min(SESSIONS, 10), 'warm');
    await waitPosted(WARMUP, 600_000);
    const sinkBefore = await sinkCeiling(sink.port);
    const bareServer = await bareSmtpServer(
      {
        greetingDelayMs: (inboundEnv as Record<string, string>).INBOUND_GREETING_DELAY_MS ?? '0',
        maxClients: inboundEnv.INBOUND_MAX_CLIENTS,
      },
      processes,
    );

    // PostgreSQL is shared with other sessions: its backends serving this run's database (the
    // services' pools, open since the warm-up) are told apart from the whole server
    const { rows: backends } = await ctx.db.query<{ pid: number }>(
      'SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
      [db.name],
    );
    // pids fixed at the start; this database's backends count again within the whole server
    const groups = {
      inbound_smtp: processTree(mx.child.pid!),
      webhook_dispatcher: processTree(dispatcher.child.pid!),
      postgresql_this_database: backends.map((b) => b.pid),
      postgresql_whole_server: pidsByName('postgres'),
      rabbitmq_whole_server: pidsByName('beam.smp'),
      dnsmasq: pidsByName('dnsmasq'),
      bench_receiver: [process.pid],
    };
    const pgStats = async () => {
      const {
        rows: [d],
      } = await ctx.db.query<Record<string, number>>(
        `SELECT xact_commit::int AS commits, tup_returned::bigint::float AS tup_returned,
                tup_fetched::bigint::float AS tup_fetched, tup_inserted::int AS inserted,
                tup_updated::int AS updated, tup_deleted::int AS deleted
           FROM pg_stat_database WHERE datname = $1`,
        [db.name],
      );
      const { rows: tables } = await ctx.db.query<{
        relname: string;
        seq_scan: number;
        seq_tup_read: number;
        idx_scan: number;
      }>(
        'SELECT relname, seq_scan::int, seq_tup_read::float, coalesce(idx_scan, 0)::int AS idx_scan FROM pg_stat_all_tables',
      );
      // index entries returned per index (tup_returned counts them besides the sequential
      // reads); all tables, catalogs and TOAST included, as tup_returned does
      const { rows: indexes } = await ctx.db.query<{ indexrelname: string; idx_tup_read: number }>(
        'SELECT indexrelname, idx_tup_read::float FROM pg_stat_all_indexes',
      );
      return { d: d!, tables, indexes };
    };
    // V8's collection pauses in the MX process (prom-client's histogram on its ops port), seconds by kind
    const gcSeconds = async (): Promise<Record<string, number>> => {
      const text = await fetch(`http://127.0.0.1:${mxOps}/metrics`).then((r) => r.text());
      const re = /^mailyard_nodejs_gc_duration_seconds_sum\{kind="(\w+)"\} (\S+)/gm;
      return Object.fromEntries([...text.matchAll(re)].map((m) => [m[1]!, Number(m[2])]));
    };
    const pg0 = await pgStats();
    const gc0 = await gcSeconds();
    const meter = new CpuMeter(
      Object.fromEntries(Object.entries(groups).map(([k, pids]) => [k, () => pids])),
      { nested: true },
    );
    await meter.start();
    const t0 = Date.now();
    const acceptSeconds = await smtpSource(smtpPort, MESSAGES, SESSIONS, 'load');
    // handed over: parsed and written for the dispatcher (the MX service's own work is done).
    // Polled from the end of the acceptance on (no message is handed over before it is
    // accepted): the count reads inbound_messages in full, and polled during the run those reads
    // were most of the table's sequential scans in the report (issue 10, sixth pass).
    const handedOver = (async () => {
      for (;;) {
        const { rows } = await ctx.db.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM inbound_messages WHERE status = 'processed'",
        );
        if (rows[0]!.n >= WARMUP + MESSAGES) return Date.now();
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const tHanded = await handedOver;
    const tEnd = await waitPosted(WARMUP + MESSAGES, 600_000);
    const mxMemory = memory(mx.child.pid!);
    const gc1 = await gcSeconds();
    const gcMsPerMessage = Object.fromEntries(
      Object.entries(gc1).map(([k, v]) => [k, Number((((v - (gc0[k] ?? 0)) * 1000) / MESSAGES).toFixed(3))]),
    );
    const cpu = Object.fromEntries(
      Object.entries(await meter.stop()).map(([k, ms]) => [k, Number((ms / 1000).toFixed(3))]),
    );
    await new Promise((r) => setTimeout(r, 600)); // statistics are flushed every 500 ms
    const pg1 = await pgStats();
    const per = (a: number, b: number) => Number(((b - a) / MESSAGES).toFixed(2));
    const postgresPerMessage = {
      ...Object.fromEntries(Object.keys(pg1.d).map((k) => [k, per(pg0.d[k]!, pg1.d[k]!)])),
      scans_by_table: Object.fromEntries(
        pg1.tables
          .map((t) => {
            const t0 = pg0.tables.find((x) => x.relname === t.relname);
            return [
              t.relname,
              {
                seq_scan: per(t0?.seq_scan ?? 0, t.seq_scan),
                seq_tup_read: per(t0?.seq_tup_read ?? 0, t.seq_tup_read),
                idx_scan: per(t0?.idx_scan ?? 0, t.idx_scan),
              },
            ] as const;
          })
          .filter(([, v]) => v.seq_scan + v.idx_scan > 0),
      ),
      index_tuples_read_by_index: Object.fromEntries(
        pg1.indexes
          .map((i) => {
            const before = pg0.indexes.find((x) => x.indexrelname === i.indexrelname);
            return [i.indexrelname, per(before?.idx_tup_read ?? 0, i.idx_tup_read)] as const;
          })
          .filter(([, v]) => v > 0),
      ),
    };
    const postSeconds = (tEnd - t0) / 1000;

    const sinkAfter = await sinkCeiling(sink.port);

    // none lost, none duplicated: one post per numbered recipient
    const recipients = receiver
      .to('/inbound')
      .map((r) => (r.json as { details?: { recipient?: string } }).details?.recipient ?? '')
      .filter((r) => r.endsWith(`load@${DOMAIN}`));
    const distinct = new Set(recipients).size;

    const acceptedPerSec = MESSAGES / acceptSeconds;
    const postedPerSec = MESSAGES / postSeconds;
    const sinkPerSec = (sinkBefore.msgs_per_sec + sinkAfter.msgs_per_sec) / 2;
    const perMessage = (s: number) => Number(((s * 1000) / MESSAGES).toFixed(3));
    const report = {
      benchmark: 'inbound',
      at: new Date().toISOString(),
      machine: { cpus: cpus().length, loadavg_1m_at_end: Number(loadavg()[0]!.toFixed(2)) },
      note: 'ratios are against smtp-sink measured in the same run; the machine is shared with other sessions',
      messages: MESSAGES,
      sessions: SESSIONS,
      message_bytes: 'smtp-source -l 2048 (about 2.2 kB with headers)',
      ...servicesForm(),
      inbound_env: inboundEnv,
      inbound: {
        accepted_per_sec: Math.round(acceptedPerSec),
        accept_seconds: Number(acceptSeconds.toFixed(3)),
        handed_over_per_sec: Math.round(MESSAGES / ((tHanded - t0) / 1000)),
        posted_per_sec: Math.round(postedPerSec),
        post_seconds: Number(postSeconds.toFixed(3)),
        posted: recipients.length,
        distinct_recipients: distinct,
        mx_rss_mb: mxMemory.rssMb,
        mx_peak_rss_mb: mxMemory.peakMb,
        mx_gc_pause_ms_per_message: gcMsPerMessage,
        cpu_seconds_by_process: cpu,
        cpu_ms_per_message: Object.fromEntries(Object.entries(cpu).map(([k, s]) => [k, perMessage(s)])),
        postgresql_per_message: postgresPerMessage,
      },
      smtp_sink: {
        command: `smtp-source -N -s ${SESSIONS} -m ${MESSAGES} -l 2048 127.0.0.1:<port>  (-> smtp-sink)`,
        before: sinkBefore,
        after: sinkAfter,
        msgs_per_sec: Math.round(sinkPerSec),
      },
      ratio_accepted_to_sink: Number((acceptedPerSec / sinkPerSec).toFixed(3)),
      ratio_handed_over_to_sink: Number((MESSAGES / ((tHanded - t0) / 1000) / sinkPerSec).toFixed(3)),
      ratio_posted_to_sink: Number((postedPerSec / sinkPerSec).toFixed(3)),
      bare_smtp_server: {
        command: `smtp-source -N -s ${SESSIONS} -m ${MESSAGES} -l 2048 127.0.0.1:<port>  (-> bench/inbound/bare-smtp-server.ts)`,
        ...bareServer,
        ratio_to_sink: Number((bareServer.msgs_per_sec / sinkPerSec).toFixed(3)),
        mx_cpu_ms_per_message_above_bare: Number(
          (perMessage(cpu.inbound_smtp!) - bareServer.cpu_ms_per_message).toFixed(3),
        ),
        ratio_posted_to_bare: Number((postedPerSec / bareServer.msgs_per_sec).toFixed(3)),
      },
      aim: { ratio_posted_to_sink: 0.333 },
    };
    printAndKeep('inbound', report);
    if (recipients.length !== MESSAGES || distinct !== MESSAGES)
      throw new Error(`posted ${recipients.length} (${distinct} distinct) of ${MESSAGES}`);
  } finally {
    for (const p of processes.reverse()) await stopProcess(p);
    await closeContext(ctx);
    await receiver.close();
    await dns.stop();
    await sink.stop();
    await db.drop();
    await vhost.drop();
  }
}

runMain(main);
