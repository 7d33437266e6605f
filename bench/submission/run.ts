/**
 * SMTP submission benchmark: messages accepted per second and CPU-ms per message through the
 * submission service (services/submission, its own process: STARTTLS, AUTH with an API key, the
 * message parsed into a send request and accepted by the shared acceptance), beside the HTTP
 * API's accept path (the gateway process, POST /v1/email/send) for the same message in the same
 * run, on the real PostgreSQL, RabbitMQ and Redis. Only acceptance is measured (no send service
 * runs: the outbox rows are published to the bus and wait there). The SMTP clients are nodemailer
 * pools (smtp-source cannot AUTH, which submission requires); the HTTP clients keep-alive fetch
 * loops. Both see the same concurrency. Prints JSON and keeps a copy in bench/results/.
 *
 *   pnpm bench:submission                               # 2000 messages each, 16 clients
 *   BENCH_MESSAGES=5000 BENCH_CONCURRENCY=32 pnpm bench:submission
 */
import { cpus, loadavg } from 'node:os';
import { closeContext, configFrom, createLogger, openContext } from '@mailyard/platform';
import { createTenant } from '@mailyard/store';
import { insertSmtpMailer } from '@mailyard/testkit/fixtures';
import { apiUrl, startOnFreePort } from '@mailyard/testkit/process';
import { createTestDatabase, createTestVhost, serverEnv } from '@mailyard/testkit/servers';
import nodemailer from 'nodemailer';
import { cpuMsOf } from '../support/cpu';
import { memory, printAndKeep, runMain, stopProcess } from '../support/proc';
import { servicesForm, spawnService } from '../support/services';

const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 2000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 500);

const MESSAGE = {
  from: 'sender@example.com',
  to: 'reader@rcpt.example',
  subject: 'Your order has shipped',
  text: `Hello,\n\nyour order 12345 is on its way.\n\n${'Thanks for shopping with us. '.repeat(20)}\n`,
  html: `<p>Hello,</p><p>your order <b>12345</b> is on its way.</p><p>${'Thanks for shopping with us. '.repeat(20)}</p>`,
};

/** `count` jobs over `concurrency` workers; seconds taken. */
async function drive(count: number, concurrency: number, job: () => Promise<void>): Promise<number> {
  let next = 0;
  const t0 = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        next++;
        await job();
      }
    }),
  );
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

async function measure(pid: number, count: number, job: () => Promise<void>) {
  await drive(WARMUP, CONCURRENCY, job);
  const cpu0 = cpuMsOf(pid) ?? 0;
  const seconds = await drive(count, CONCURRENCY, job);
  const cpuMs = (cpuMsOf(pid) ?? 0) - cpu0;
  return {
    messages: count,
    seconds: Number(seconds.toFixed(2)),
    messages_per_s: Math.round(count / seconds),
    cpu_ms_per_message: Number((cpuMs / count).toFixed(3)),
    memory: memory(pid),
  };
}

async function main() {
  const db = await createTestDatabase();
  const vhost = createTestVhost();
  const env = {
    ...serverEnv(db, vhost),
    LOG_LEVEL: 'error',
    HOST: '127.0.0.1',
    SERVICE_DOMAIN: 'bench.test',
    RATE_LIMIT_ENTERPRISE: '100000000',
    API_KEY_CACHE_MS: '60000',
  };
  const ctx = await openContext(configFrom(env), createLogger('bench-submission', 'error'));
  const tenant = await createTenant(ctx.db, { name: 'bench-submission', tier: 'enterprise' });
  const mailerId = await insertSmtpMailer(ctx.db, ctx.sealer, tenant.id, { port: 9 });
  await closeContext(ctx);

  const gateway = spawnService('gateway', { ...env, PORT: '0' });
  await gateway.waitFor(/API http/, 120_000);
  const submission = await startOnFreePort(
    (port) =>
      spawnService('submission', {
        ...env,
        SUBMISSION_PORT: String(port),
        DATA_DIR: '/tmp/bench-submission',
      }),
    /SMTP submission smtp:/,
    120_000,
  );
  try {
    const url = `${apiUrl(gateway)}/v1/email/send`;
    const body = JSON.stringify({
      mailer_id: mailerId,
      from: { email: MESSAGE.from },
      to: [{ email: MESSAGE.to }],
      subject: MESSAGE.subject,
      content: [
        { type: 'text/plain', value: MESSAGE.text },
        { type: 'text/html', value: MESSAGE.html },
      ],
    });
    const headers = { Authorization: `Bearer ${tenant.apiKey}`, 'Content-Type': 'application/json' };
    const api = await measure(gateway.child.pid!, MESSAGES, async () => {
      const res = await fetch(url, { method: 'POST', headers, body });
      if (res.status !== 200) throw new Error(`API answered ${res.status}: ${await res.text()}`);
      await res.arrayBuffer();
    });

    const transport = nodemailer.createTransport({
      host: '127.0.0.1',
      port: submission.port,
      secure: false,
      requireTLS: true,
      tls: { rejectUnauthorized: false },
      auth: { user: 'apikey', pass: tenant.apiKey },
      pool: true,
      maxConnections: CONCURRENCY,
      maxMessages: Number.POSITIVE_INFINITY,
    });
    const smtp = await measure(submission.p.child.pid!, MESSAGES, async () => {
      const info = await transport.sendMail(MESSAGE);
      if (!/queued as/.test(info.response)) throw new Error(`submission answered ${info.response}`);
    });
    transport.close();

    printAndKeep('submission', {
      benchmark: 'submission',
      at: new Date().toISOString(),
      machine: { cpus: cpus().length, model: cpus()[0]?.model, loadavg: loadavg() },
      ...servicesForm(),
      concurrency: CONCURRENCY,
      warmup: WARMUP,
      message_bytes: { text: MESSAGE.text.length, html: MESSAGE.html.length },
      api_accept: api,
      submission: smtp,
      submission_over_api_rate: Number((smtp.messages_per_s / api.messages_per_s).toFixed(2)),
    });
  } finally {
    await stopProcess(submission.p);
    await stopProcess(gateway);
    await db.drop();
    await vhost.drop();
  }
}

runMain(main, { exit: true });
