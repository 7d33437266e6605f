import { migrate, openDatabase, resolveSealer } from '@mailyard/platform';
/**
 * The chaos run (issue 7, "Proof that stays in the project"): the gateway and the send service
 * as separate processes on private PostgreSQL, RabbitMQ and Redis servers (private-servers.ts;
 * the shared ones are never touched), domain-mailer sends relayed to Postfix's smtp-sink, a
 * steady load of POST /v1/email/send, and meanwhile: kill -9 of each process, RabbitMQ
 * stopped and started, PostgreSQL restarted twice, Redis restarted. A supervisor restarts what
 * the run killed and counts every process that exits on its own as a crash.
 *
 * Afterwards every accepted send (2xx) must reach the sink: `lost` lists those that did not;
 * duplicates (SMTP is not exactly-once across a kill) are counted. Used by test/chaos.test.ts
 * (short form) and scripts/chaos.ts (`pnpm chaos`, long form).
 */
import { createTenant } from '@mailyard/store';
import { dkimKeyPair, insertDomainMailer } from '@mailyard/testkit/fixtures';
import { type SmtpSink, startSmtpSink } from '@mailyard/testkit/peers/smtp-sink';
import {
  type PrivatePostgres,
  type PrivateRabbit,
  type PrivateServer,
  startPrivatePostgres,
  startPrivateRabbit,
  startPrivateRedis,
} from '@mailyard/testkit/private-servers';
import { type Spawned, freePort, spawnTs } from '@mailyard/testkit/process';
import { TEST_SECRET_KEY } from '@mailyard/testkit/servers';

export interface ChaosOptions {
  /** How long the load and the faults run (the drain afterwards is extra). */
  durationMs: number;
  /** Sends per second offered to the gateway. */
  rate: number;
  /** Rounds of the fault schedule within durationMs (each round: every fault once). */
  rounds?: number;
  /** How long to wait for every accepted send to be delivered after the load stops. */
  drainTimeoutMs?: number;
  log?: (line: string) => void;
}

export interface Crash {
  process: string;
  code: number | null;
  signal: string | null;
  /** The last lines the process wrote. */
  output: string;
}

export interface ChaosReport {
  attempted: number;
  accepted: number;
  /** Answers other than 2xx, by status (0 = connection refused/reset or timeout). */
  refused: Record<string, number>;
  delivered: number;
  lost: string[];
  /** Messages the sink received beyond one per send. */
  duplicates: number;
  /** Deliveries of sends whose 2xx never reached the client (a kill between commit and answer). */
  unacknowledgedDelivered: number;
  restarts: Record<string, number>;
  crashes: Crash[];
  faults: string[];
  drainMs: number;
}

const MESSAGE_ID = /^Message-ID: <svc_mailer_([0-9A-Za-z]+)\.1@/m;

interface Supervised {
  name: string;
  current: Spawned;
  /** Set just before the run kills or stops it on purpose. */
  expectingExit: boolean;
  stopped: boolean;
  restarts: number;
}

export async function runChaos(opts: ChaosOptions): Promise<ChaosReport> {
  const log = opts.log ?? ((line: string) => process.stdout.write(`[chaos] ${line}\n`));
  const rounds = opts.rounds ?? 1;
  const servers: Array<PrivateServer> = [];
  let sink: SmtpSink | undefined;
  const supervised: Supervised[] = [];
  const crashes: Crash[] = [];
  const faults: string[] = [];
  try {
    log('starting private PostgreSQL, Redis, RabbitMQ and smtp-sink');
    const [postgres, redis, rabbit, sinkStarted] = await Promise.all([
      startPrivatePostgres(),
      startPrivateRedis(),
      startPrivateRabbit(),
      startSmtpSink({ dump: true }),
    ]);
    servers.push(postgres, redis, rabbit);
    sink = sinkStarted;
    const databaseUrl = await postgres.createDatabase('mailyard');

    // Schema, tenant and a verified domain mailer, written directly (the gateway would need DNS).
    const db = await openDatabase({ DATABASE_URL: databaseUrl, DATA_DIR: '', DB_POOL_SIZE: 2 });
    await migrate(db);
    const tenant = await createTenant(db, { name: 'chaos', tier: 'enterprise' });
    const sealer = resolveSealer({ SECRET_KEY: TEST_SECRET_KEY, DATABASE_URL: databaseUrl, DATA_DIR: '' });
    const mailerId = await insertDomainMailer(db, sealer, tenant.id, {
      domain: 'chaos.test',
      selector: 'chaos',
      key: dkimKeyPair(),
    });
    await db.close();

    const port = await freePort();
    const opsPort = await freePort();
    const env = {
      DATABASE_URL: databaseUrl,
      AMQP_URL: rabbit.url,
      REDIS_URL: redis.url,
      REDIS_KEY_PREFIX: 'chaos:',
      SECRET_KEY: TEST_SECRET_KEY,
      SMTP_RELAY_URL: `smtp://127.0.0.1:${sink.port}`,
      RATE_LIMIT_ENTERPRISE: '100000000',
      OUTBOX_POLL_MS: '100',
      API_KEY_CACHE_MS: '60000',
      LOG_LEVEL: 'warn',
    };
    const spawnService = (name: string): Spawned =>
      name === 'gateway'
        ? spawnTs('services/gateway/src/main.ts', { ...env, PORT: String(port) })
        : spawnTs('services/send/src/main.ts', { ...env, OPS_PORT: String(opsPort) });

    const supervise = (s: Supervised) => {
      void s.current.exited.then(({ code, signal }) => {
        if (s.stopped) return;
        if (!s.expectingExit) {
          const output = s.current.output().split('\n').slice(-40).join('\n');
          crashes.push({ process: s.name, code, signal, output });
          log(`CRASH: ${s.name} exited on its own (code ${code}, signal ${signal})\n${output}`);
        }
        s.expectingExit = false;
        s.restarts++;
        s.current = spawnService(s.name);
        supervise(s);
      });
    };
    for (const name of ['gateway', 'send']) {
      const s: Supervised = {
        name,
        current: spawnService(name),
        expectingExit: false,
        stopped: false,
        restarts: 0,
      };
      supervised.push(s);
      supervise(s);
    }
    await Promise.all(supervised.map((s) => s.current.waitFor(/Mailyard \w+ started/, 120_000)));
    log(`gateway on :${port}, send service (ops :${opsPort}); load ${opts.rate}/s for ${opts.durationMs} ms`);

    // ---- steady load
    const accepted = new Set<string>();
    const refused: Record<string, number> = {};
    let attempted = 0;
    let loadRunning = true;
    const inFlight = new Set<Promise<void>>();
    const sendOne = async (i: number) => {
      attempted++;
      try {
        const res = await fetch(`http://127.0.0.1:${port}/v1/email/send`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${tenant.apiKey}`, 'Content-Type': 'application/json' },
          body: JSON.stringify({
            from: { email: 'load@chaos.test' },
            to: [{ email: `r${i}@example.com` }],
            mailer_id: mailerId,
            subject: `chaos ${i}`,
            content: [{ type: 'text/plain', value: `message ${i}` }],
          }),
          signal: AbortSignal.timeout(15_000),
        });
        const body = (await res.json().catch(() => ({}))) as { ref_id?: string };
        if (res.ok && body.ref_id) accepted.add(body.ref_id);
        else refused[res.status] = (refused[res.status] ?? 0) + 1;
      } catch {
        refused['0'] = (refused['0'] ?? 0) + 1;
      }
    };
    const load = (async () => {
      const started = Date.now();
      let i = 0;
      while (loadRunning) {
        const due = Math.floor(((Date.now() - started) / 1000) * opts.rate);
        while (i < due && inFlight.size < 200) {
          const p = sendOne(i++).finally(() => inFlight.delete(p));
          inFlight.add(p);
        }
        await new Promise((r) => setTimeout(r, 20));
      }
      await Promise.allSettled([...inFlight]);
    })();

    // ---- faults
    const byName = (name: string) => supervised.find((s) => s.name === name)!;
    const kill9 = async (name: string) => {
      const s = byName(name);
      s.expectingExit = true;
      const old = s.current;
      old.child.kill('SIGKILL');
      await old.exited;
      // the supervisor restarts it
      await waitUntil(() => byName(name).current !== old, 10_000);
    };
    const schedule: Array<[string, () => Promise<void>]> = [
      ['kill -9 gateway', () => kill9('gateway')],
      ['restart PostgreSQL', () => postgres.restart()],
      ['kill -9 send service', () => kill9('send')],
      [
        'stop RabbitMQ, start it again',
        async () => {
          await (rabbit as PrivateRabbit).stop();
          await sleep(2_000);
          await rabbit.start();
        },
      ],
      ['restart Redis', () => redis.restart()],
      ['restart PostgreSQL', () => (postgres as PrivatePostgres).restart()],
    ];
    const steps = rounds * schedule.length;
    const gap = opts.durationMs / (steps + 1);
    const faultsStarted = Date.now();
    for (let n = 0; n < steps; n++) {
      const wait = faultsStarted + gap * (n + 1) - Date.now();
      if (wait > 0) await sleep(wait);
      const [what, fault] = schedule[n % schedule.length]!;
      const t = Date.now();
      await fault();
      faults.push(what);
      log(`${what} (${Date.now() - t} ms); accepted so far ${accepted.size}`);
    }
    const remaining = faultsStarted + opts.durationMs - Date.now();
    if (remaining > 0) await sleep(remaining);
    loadRunning = false;
    await load;
    log(`load stopped: ${attempted} attempted, ${accepted.size} accepted; waiting for deliveries`);

    // ---- drain: every accepted send delivered?
    const drainStarted = Date.now();
    const drainTimeout = opts.drainTimeoutMs ?? 180_000;
    let seen = new Map<string, number>();
    let total = 0;
    const readSink = () => {
      seen = new Map();
      const messages = sink!.messages();
      total = messages.length;
      for (const m of messages) {
        const id = MESSAGE_ID.exec(m.message)?.[1];
        if (id) seen.set(id, (seen.get(id) ?? 0) + 1);
      }
    };
    for (;;) {
      readSink();
      const missing = [...accepted].filter((id) => !seen.has(id)).length;
      if (missing === 0 || Date.now() - drainStarted > drainTimeout) break;
      await sleep(1_000);
    }
    const drainMs = Date.now() - drainStarted;
    const lost = [...accepted].filter((id) => !seen.has(id));
    const duplicates = total - seen.size;
    const unacknowledgedDelivered = [...seen.keys()].filter((id) => !accepted.has(id)).length;

    // ---- orderly stop: SIGTERM must still drain and exit 0
    for (const s of supervised) {
      s.stopped = true;
      s.current.child.kill('SIGTERM');
      const { code, signal } = await s.current.exited;
      if (code !== 0) {
        crashes.push({
          process: s.name,
          code,
          signal,
          output: `did not exit 0 on SIGTERM\n${s.current.output().split('\n').slice(-40).join('\n')}`,
        });
      }
    }
    return {
      attempted,
      accepted: accepted.size,
      refused,
      delivered: [...accepted].filter((id) => seen.has(id)).length,
      lost,
      duplicates,
      unacknowledgedDelivered,
      restarts: Object.fromEntries(supervised.map((s) => [s.name, s.restarts])),
      crashes,
      faults,
      drainMs,
    };
  } finally {
    for (const s of supervised) {
      s.stopped = true;
      if (s.current.child.exitCode === null && s.current.child.signalCode === null) {
        s.current.child.kill('SIGKILL');
        await s.current.exited;
      }
    }
    await sink?.stop();
    await Promise.allSettled(servers.map((s) => s.destroy()));
  }
}

export function formatReport(r: ChaosReport): string {
  return [
    `faults: ${r.faults.join(', ')}`,
    `sends attempted ${r.attempted}, accepted (2xx) ${r.accepted}, refused ${JSON.stringify(r.refused)}`,
    `delivered ${r.delivered}, lost ${r.lost.length}, duplicates ${r.duplicates}, delivered without a 2xx ${r.unacknowledgedDelivered}`,
    `restarts ${JSON.stringify(r.restarts)}, crashes ${r.crashes.length}, drain ${r.drainMs} ms`,
  ].join('\n');
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

async function waitUntil(cond: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(20);
  }
}
