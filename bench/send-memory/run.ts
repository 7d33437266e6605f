/**
 * Memory of a large personalised send (issue 7, item 7): one send of BENCH_COPIES substitution
 * copies (24) with one BENCH_ATTACHMENT_MB (9) MB attachment, accepted the way the gateway
 * accepts it, delivered by a send-service process (services/send/src/main.ts, as production
 * runs it) through a verified domain mailer (DKIM) and SMTP_RELAY_URL to Postfix's smtp-sink,
 * on the real PostgreSQL and RabbitMQ. Reports the service's RSS before the send and at its peak
 * (VmRSS and VmHWM from /proc), the slowest /healthz answer on its ops port while it delivered,
 * and how long the copies took. Prints JSON (and keeps a copy in bench/results/).
 *
 *   pnpm bench:send-memory
 *   BENCH_COPIES=64 BENCH_ATTACHMENT_MB=29 pnpm bench:send-memory
 *   BENCH_SEND_ENV='SEND_INFLIGHT_BYTES=134217728' pnpm bench:send-memory
 */
import { randomBytes } from 'node:crypto';
import { closeContext, configFrom, createLogger, openContext } from '@mailyard/platform';
import { acceptSend, dkimKeyPair, insertDomainMailer, newTenant } from '@mailyard/testkit/fixtures';
import { startSmtpSink } from '@mailyard/testkit/peers/smtp-sink';
import { type Spawned, freePort } from '@mailyard/testkit/process';
import { createTestDatabase, createTestVhost, serverEnv } from '@mailyard/testkit/servers';
import { envList, memory, printAndKeep, runMain, stopProcess } from '../support/proc';
import { spawnService } from '../support/services';

const COPIES = Number(process.env.BENCH_COPIES ?? 24);
const ATTACHMENT_MB = Number(process.env.BENCH_ATTACHMENT_MB ?? 9);
const DOMAIN = 'bench.test';

async function main(): Promise<void> {
  const db = await createTestDatabase();
  const vhost = createTestVhost();
  const sink = await startSmtpSink({ backlog: 1024 });
  const opsPort = await freePort();
  const stores = {
    ...serverEnv(db, vhost),
    SERVICE_DOMAIN: 'mailyard.bench',
    NODE_ENV: 'production',
  };
  const sendEnv = {
    SMTP_RELAY_URL: `smtp://127.0.0.1:${sink.port}`,
    OPS_PORT: String(opsPort),
    HOST: '127.0.0.1',
    ...envList(process.env.BENCH_SEND_ENV),
  };
  const ctx = await openContext(
    configFrom({ ...stores, LOG_LEVEL: 'error' }),
    createLogger('bench', 'error'),
  );
  let send: Spawned | undefined;
  try {
    send = spawnService('send', { ...stores, ...sendEnv, LOG_LEVEL: 'warn' });
    await send.waitFor(/Mailyard send started/, 60_000);
    const pid = send.child.pid!;
    const tenantId = await newTenant(ctx.db);
    const mailerId = await insertDomainMailer(ctx.db, ctx.sealer, tenantId, {
      domain: DOMAIN,
      key: dkimKeyPair(),
    });
    // Let the process settle after start-up, then take the baseline.
    await new Promise((r) => setTimeout(r, 2000));
    const before = memory(pid);

    const to = Array.from({ length: COPIES }, (_, i) => ({ email: `user${i}@example.com` }));
    const attachment = randomBytes(Math.round(ATTACHMENT_MB * 1024 * 1024)).toString('base64');
    const t0 = Date.now();
    const { refId } = await acceptSend(ctx.db, tenantId, {
      from: { email: `news@${DOMAIN}` },
      to,
      mailer_id: mailerId,
      subject: 'Your report, {{name}}',
      content: [
        { type: 'text/html', value: '<p>Hello {{name}}, your report is attached.</p>' },
        { type: 'text/plain', value: 'Hello {{name}}, your report is attached.' },
      ],
      substitutions: Object.fromEntries(to.map((r, i) => [r.email, { name: `User ${i}` }])),
      attachments: [{ filename: 'report.pdf', content: attachment, type: 'application/pdf' }],
    });
    const accepted = Date.now();

    // Watch RSS and /healthz until every copy has its outcome.
    let slowestHealthzMs = 0;
    let healthzAnswers = 0;
    let maxRssMb = before.rssMb;
    let finished = false;
    const watch = (async () => {
      while (!finished) {
        const h0 = Date.now();
        const res = await fetch(`http://127.0.0.1:${opsPort}/healthz`, {
          signal: AbortSignal.timeout(120_000),
        });
        await res.arrayBuffer();
        slowestHealthzMs = Math.max(slowestHealthzMs, Date.now() - h0);
        healthzAnswers++;
        maxRssMb = Math.max(maxRssMb, memory(pid).rssMb);
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    let outcome: Array<{ status: string; n: number }> = [];
    for (;;) {
      const { rows } = await ctx.db.query<{ status: string; n: number }>(
        'SELECT status, count(*)::int AS n FROM email_logs WHERE ref_id = $1 GROUP BY status ORDER BY status',
        [refId],
      );
      outcome = rows;
      if (!rows.some((r) => r.status === 'QUEUED')) break;
      if (Date.now() - t0 > 600_000)
        throw new Error(`not finished within 10 minutes: ${JSON.stringify(rows)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const done = Date.now();
    finished = true;
    await watch;
    const after = memory(pid);
    const report = {
      benchmark: 'send-memory',
      at: new Date().toISOString(),
      copies: COPIES,
      attachment_mb: ATTACHMENT_MB,
      send_service_env: sendEnv,
      rss_mb: { before: before.rssMb, peak_sampled: maxRssMb, peak_vmhwm: after.peakMb, after: after.rssMb },
      healthz: { slowest_ms: slowestHealthzMs, answers: healthzAnswers },
      seconds: { accept: (accepted - t0) / 1000, deliver_all: (done - accepted) / 1000 },
      log_statuses: outcome,
    };
    printAndKeep('send-memory', report);
  } catch (err) {
    if (send)
      process.stderr.write(`send service output (last 4000 characters):\n${send.output().slice(-4000)}\n`);
    throw err;
  } finally {
    if (send) await stopProcess(send);
    await closeContext(ctx);
    await sink.stop();
    await db.drop();
    await vhost.drop();
  }
}

runMain(main);
