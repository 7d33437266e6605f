/**
 * Send pipeline benchmark: N emails through POST /v1/email/send on a gateway process, rendered,
 * DKIM-signed and delivered by a send-service process through SMTP_RELAY_URL to Postfix's
 * smtp-sink, on the real PostgreSQL, RabbitMQ and Redis. Beside it, in the same run, Postfix's
 * own load generator (smtp-source -> smtp-sink) measures the machine's SMTP ceiling. Prints JSON.
 *
 *   pnpm bench:send                                   # 2000 emails, 50 API connections
 *   BENCH_EMAILS=5000 BENCH_CONNECTIONS=100 pnpm bench:send
 *   BENCH_SEND_ENV='SEND_CONCURRENCY=128 SEND_POOL_CONNECTIONS=8' pnpm bench:send
 */
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { closeContext, configFrom, createLogger, openContext } from '@mailyard/platform';
import { findKeyOwner } from '@mailyard/store';
import { dkimKeyPair, insertDomainMailer } from '@mailyard/testkit/fixtures';
import { startSmtpSink } from '@mailyard/testkit/peers/smtp-sink';
import { REPO_ROOT, type Spawned, freePort, spawnTs } from '@mailyard/testkit/process';
import {
  REDIS_URL,
  TEST_SECRET_KEY,
  createTestDatabase,
  createTestVhost,
  testRedisPrefix,
} from '@mailyard/testkit/servers';
import autocannon from 'autocannon';
import { byName, cpuSeconds, tree } from '../support/proc';

const run = promisify(execFile);

const EMAILS = Number(process.env.BENCH_EMAILS ?? 2000);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 200);
const KEY = 'myk_bench_send_bootstrap_key_0123456789abcdef';
const DOMAIN = 'bench.test';

/** `A=1 B=2` -> {A: '1', B: '2'} (extra settings for the send service, to compare tunings). */
function envList(text: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of (text ?? '').split(/\s+/).filter(Boolean)) {
    const i = pair.indexOf('=');
    if (i > 0) out[pair.slice(0, i)] = pair.slice(i + 1);
  }
  return out;
}

async function main(): Promise<void> {
  const db = await createTestDatabase();
  const vhost = createTestVhost();
  const sink = await startSmtpSink({ backlog: 1024 });
  const ceilingSink = await startSmtpSink({ backlog: 1024 });
  const gwPort = await freePort();
  const stores = {
    DATABASE_URL: db.url,
    AMQP_URL: vhost.url,
    REDIS_URL,
    REDIS_KEY_PREFIX: testRedisPrefix(),
    SECRET_KEY: TEST_SECRET_KEY,
    SERVICE_DOMAIN: 'mailyard.bench',
    LOG_LEVEL: 'warn',
    NODE_ENV: 'production',
  };
  const sendEnv = { SMTP_RELAY_URL: `smtp://127.0.0.1:${sink.port}`, ...envList(process.env.BENCH_SEND_ENV) };
  const processes: Spawned[] = [];
  const ctx = await openContext(
    configFrom({ ...stores, LOG_LEVEL: 'error' }),
    createLogger('bench', 'error'),
  );
  try {
    // The send service first, so its queue is bound before the gateway publishes commands.
    let send = spawnTs('services/send/src/main.ts', { ...stores, ...sendEnv });
    processes.push(send);
    await send.waitFor(/Mailyard send started/, 60_000);
    const gateway = spawnTs('services/gateway/src/main.ts', {
      ...stores,
      PORT: String(gwPort),
      BOOTSTRAP_API_KEY: KEY,
      BOOTSTRAP_TIER: 'enterprise',
      RATE_LIMIT_ENTERPRISE: '1000000000',
    });
    processes.push(gateway);
    await gateway.waitFor(/Mailyard gateway started/, 60_000);

    const owner = await findKeyOwner(ctx.db, KEY);
    if (!owner) throw new Error('bootstrap tenant not found');
    const tenantId = owner.tenantId;
    const mailerId = await insertDomainMailer(ctx.db, ctx.sealer, tenantId, {
      domain: DOMAIN,
      key: dkimKeyPair(),
    });

    const url = `http://127.0.0.1:${gwPort}/v1/email/send`;
    const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
    let n = 0;
    const body = (i: number) =>
      JSON.stringify({
        from: { email: `news@${DOMAIN}`, name: 'Bench News' },
        to: [{ email: `user${i}@example.com`, name: `User ${i}` }],
        mailer_id: mailerId,
        subject: 'Your weekly digest, {{name}}',
        content: [
          {
            type: 'text/html',
            value: `<html><body><h1>Hello {{name}}</h1><p>${'Here is what happened this week. '.repeat(20)}</p><p><a href="https://${DOMAIN}/digest">Read more</a></p></body></html>`,
          },
          {
            type: 'text/plain',
            value: `Hello {{name}}\n\n${'Here is what happened this week. '.repeat(20)}\nhttps://${DOMAIN}/digest`,
          },
        ],
        substitutions: { [`user${i}@example.com`]: { name: `User ${i}` } },
        custom_args: { bench: true, i },
      });
    const delivered = async (): Promise<number> => {
      const { rows } = await ctx.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM email_logs WHERE tenant_id = $1 AND status = 'MAIL_DELIVERED'`,
        [tenantId],
      );
      return rows[0]!.n;
    };
    const waitDelivered = async (target: number, timeoutMs: number): Promise<number> => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const d = await delivered();
        if (d >= target) return Date.now();
        if (Date.now() > deadline)
          throw new Error(`only ${d} of ${target} emails delivered within ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    const load = (amount: number, connections: number) =>
      autocannon({
        url,
        method: 'POST',
        headers,
        connections,
        amount,
        requests: [{ setupRequest: (req) => ({ ...req, body: body(n++) }) }],
      });

    // Warm-up: JIT, pools, DKIM key cache, SMTP connections.
    await load(WARMUP, 10);
    await waitDelivered(WARMUP, 120_000);

    const groups = {
      gateway: tree(gateway.child.pid!),
      send_service: tree(send.child.pid!),
      postgresql: byName('postgres'),
      rabbitmq: byName('beam.smp'),
      smtp_sink: byName('smtp-sink'),
      bench_client: [process.pid],
    };
    const cpuBefore = Object.fromEntries(Object.entries(groups).map(([k, pids]) => [k, cpuSeconds(pids)]));
    const t0 = Date.now();
    const api = await load(EMAILS, CONNECTIONS);
    const tApi = Date.now();
    const tEnd = await waitDelivered(WARMUP + EMAILS, 600_000);
    const cpu = Object.fromEntries(
      Object.entries(groups).map(([k, pids]) => [k, Number((cpuSeconds(pids) - cpuBefore[k]!).toFixed(2))]),
    );
    const apiSeconds = (tApi - t0) / 1000;
    const e2eSeconds = (tEnd - t0) / 1000;
    const { rows: failed } = await ctx.db.query<{ status: string; n: number }>(
      `SELECT status, count(*)::int AS n FROM email_logs WHERE tenant_id = $1 AND status <> 'MAIL_DELIVERED' GROUP BY status`,
      [tenantId],
    );

    // The send service alone: stopped while N more sends are accepted (their commands wait in
    // RabbitMQ), then started again and timed from its first delivery to the last.
    send.child.kill('SIGTERM');
    await send.exited;
    processes.splice(processes.indexOf(send), 1);
    const queued = await load(EMAILS, CONNECTIONS);
    const before = await delivered();
    send = spawnTs('services/send/src/main.ts', { ...stores, ...sendEnv });
    processes.push(send);
    await send.waitFor(/Mailyard send started/, 60_000);
    const sendPids = tree(send.child.pid!);
    const drainCpu0 = cpuSeconds(sendPids);
    const drainStart = await waitDelivered(before + 1, 120_000);
    const drainEnd = await waitDelivered(WARMUP + 2 * EMAILS, 600_000);
    const drainSeconds = (drainEnd - drainStart) / 1000;
    const drainCpu = cpuSeconds(sendPids) - drainCpu0;

    // The machine's SMTP ceiling: Postfix's load generator into the same kind of sink.
    const s0 = Date.now();
    await run('smtp-source', ['-s', '20', '-m', String(EMAILS), `127.0.0.1:${ceilingSink.port}`]);
    const ceilingSeconds = (Date.now() - s0) / 1000;
    const ceiling = EMAILS / ceilingSeconds;

    const deliveredPerSec = EMAILS / e2eSeconds;
    const report = {
      benchmark: 'send',
      at: new Date().toISOString(),
      machine: { cpus: cpus().length },
      emails: EMAILS,
      api_connections: CONNECTIONS,
      transport: 'domain mailer, DKIM rsa-sha256 2048, SMTP_RELAY_URL -> Postfix smtp-sink',
      send_service_env: sendEnv,
      api: {
        accepted_per_sec: Math.round(EMAILS / apiSeconds),
        wall_seconds: Number(apiSeconds.toFixed(2)),
        p50_ms: api.latency.p50,
        p99_ms: api.latency.p99,
        non_2xx: api.non2xx,
        errors: api.errors + api.timeouts,
      },
      end_to_end: {
        delivered_per_sec: Math.round(deliveredPerSec),
        seconds: Number(e2eSeconds.toFixed(2)),
        not_delivered: failed,
        cpu_seconds_by_process: cpu,
        send_service_cpu_ms_per_email: Number((((cpu.send_service ?? 0) * 1000) / EMAILS).toFixed(2)),
      },
      send_service_alone: {
        note: 'commands queued while the send service was stopped, then drained; gateway idle',
        accepted_while_stopped: EMAILS - queued.non2xx,
        delivered_per_sec: Math.round((EMAILS - 1) / drainSeconds),
        seconds: Number(drainSeconds.toFixed(2)),
        cpu_ms_per_email: Number(((drainCpu * 1000) / EMAILS).toFixed(2)),
      },
      smtp_ceiling: {
        command: `smtp-source -s 20 -m ${EMAILS} 127.0.0.1:<port>  (-> smtp-sink)`,
        msgs_per_sec: Math.round(ceiling),
        seconds: Number(ceilingSeconds.toFixed(2)),
      },
      ratio_delivered_to_ceiling: Number((deliveredPerSec / ceiling).toFixed(3)),
      aim: { delivered_per_sec: 1000 },
    };
    const json = JSON.stringify(report, null, 2);
    process.stdout.write(`${json}\n`);
    const dir = join(REPO_ROOT, 'bench', 'results');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `send-${Date.now()}.json`), json);
  } finally {
    for (const p of processes.reverse()) {
      p.child.kill('SIGTERM');
      await p.exited;
    }
    await closeContext(ctx);
    await sink.stop();
    await ceilingSink.stop();
    await db.drop();
    await vhost.drop();
  }
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exit(1);
});
