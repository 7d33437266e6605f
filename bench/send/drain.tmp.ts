import { closeContext, configFrom, createLogger, openContext } from '@mailyard/platform';
import { acceptSend, dkimKeyPair, insertDomainMailer, newTenant } from '../../services/send/test/support/fixtures';
import { startSmtpSink } from '../../test/support/peers/smtp-sink';
import { spawnTs } from '../../test/support/process';
import { REDIS_URL, TEST_SECRET_KEY, createTestDatabase, createTestVhost, testRedisPrefix } from '../../test/support/servers';

async function main() {
  const N = Number(process.env.N ?? 3000);
  const db = await createTestDatabase(); const vhost = createTestVhost(); const sink = await startSmtpSink({ backlog: 1024 });
  const stores = { DATABASE_URL: db.url, AMQP_URL: vhost.url, REDIS_URL, REDIS_KEY_PREFIX: testRedisPrefix(), SECRET_KEY: TEST_SECRET_KEY, LOG_LEVEL: 'warn', NODE_ENV: 'production' };
  const ctx = await openContext(configFrom({ ...stores, LOG_LEVEL: 'error' }), createLogger('b', 'error'));
  const tenantId = await newTenant(ctx.db);
  const mailerId = await insertDomainMailer(ctx.db, ctx.sealer, tenantId, { domain: 'bench.test', key: dkimKeyPair() });
  // bind the queue first by starting the service once
  const extra = Object.fromEntries((process.env.SENV ?? '').split(' ').filter(Boolean).map((p) => p.split('=')));
  let s = spawnTs('services/send/src/main.ts', { ...stores, SMTP_RELAY_URL: `smtp://127.0.0.1:${sink.port}`, ...extra });
  await s.waitFor(/Mailyard send started/); s.child.kill('SIGTERM'); await s.exited;
  const body = `<html><body><h1>Hello {{name}}</h1><p>${'Here is what happened this week. '.repeat(20)}</p></body></html>`;
  for (let i = 0; i < N; i += 100) {
    const to = Array.from({ length: 100 }, (_, j) => ({ email: `u${i + j}@example.com` }));
    await acceptSend(ctx.db, tenantId, { from: { email: 'news@bench.test' }, to, mailer_id: mailerId, subject: 'Hi {{name}}', content: [{ type: 'text/html', value: body }], substitutions: Object.fromEntries(to.map((r) => [r.email, { name: r.email }])) });
  }
  let t0 = 0;
  const { spawn } = await import('node:child_process');
  const env = { ...process.env, ...stores, SMTP_RELAY_URL: `smtp://127.0.0.1:${sink.port}`, ...extra };
  const child = spawn(process.execPath, [...(process.env.PROF ? ['--cpu-prof', '--cpu-prof-dir=/tmp/prof'] : []), '--import', 'tsx', 'services/send/src/main.ts'], { env, stdio: 'inherit' });
  s = { child, exited: new Promise((r) => child.on('exit', r)) } as never;
  for (;;) {
    const { rows } = await ctx.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM email_logs WHERE status = 'MAIL_DELIVERED'`);
    if (rows[0]!.n > 0 && t0 === 0) t0 = Date.now();
    if (rows[0]!.n >= N) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const secs = (Date.now() - t0) / 1000;
  console.log(JSON.stringify({ N, seconds: secs, per_sec: Math.round(N / secs), extra }));
  s.child.kill('SIGTERM'); await s.exited;
  await closeContext(ctx); await sink.stop(); await db.drop(); await vhost.drop();
}
main();
