/**
 * The production start (issue 14): `pnpm start` runs scripts/run-dist.mjs, which builds dist/bin
 * when it is missing or stale and runs the compiled all-in-one dist/bin/mailyard.js in ONE process
 * (no tsx launcher and worker, no esbuild service). On embedded defaults (PGlite, in-process bus
 * and kv) that process must answer /readyz, stay under the 250 MB footprint aim through start-up
 * (VmHWM, the peak resident size, read once it is ready), deliver an email end to end through
 * the API to an SMTP server, and drain and exit 0 on SIGTERM. bench/footprint measures the idle
 * figure; this test holds the properties.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '@mailyard/testkit/eventually';
import { type SmtpReceiver, startSmtpReceiver } from '@mailyard/testkit/peers/smtp-receiver';
import { type Spawned, apiUrl, spawnCompiled } from '@mailyard/testkit/process';

jest.setTimeout(300_000);

const KEY = 'myk_compiled_start_key_0123456789abcdefghij';
const FOOTPRINT_AIM_MB = 250;

let dataDir: string;
let receiver: SmtpReceiver;
let server: Spawned | undefined;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'mailyard-compiled-'));
  receiver = await startSmtpReceiver({ auth: { user: 'compiled-user', pass: 'compiled-pass' } });
});
afterAll(async () => {
  if (server && server.child.exitCode === null && server.child.signalCode === null) {
    server.child.kill('SIGKILL');
    await server.exited;
  }
  await receiver?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** Child processes of `pid` (from /proc/<pid>/stat, field 4). */
function childrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e))
    .filter((e) => {
      try {
        const stat = readFileSync(`/proc/${e}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid;
      } catch {
        return false;
      }
    })
    .map(Number);
}

const statusKb = (pid: number, field: string) =>
  Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);

it('runs the compiled all-in-one in one process, under 250 MB, and delivers an email', async () => {
  server = spawnCompiled('mailyard', {
    DATA_DIR: dataDir,
    PORT: '0',
    TRACKING_PORT: '0',
    SMTP_PORT: '0',
    DATABASE_URL: '',
    AMQP_URL: '',
    REDIS_URL: '',
    BOOTSTRAP_API_KEY: KEY,
    MAILER_ALLOW_PRIVATE_HOSTS: '1',
  });
  // Building dist/bin first (when stale) and creating the database take a while on a busy machine.
  await server.waitFor(/Mailyard mailyard started \(embedded mode\)[\s\S]*kv:/, 240_000);
  const api = apiUrl(server);
  const pid = server.child.pid!;

  const ready = await fetch(`${api}/readyz`);
  expect(ready.status).toBe(200);
  expect(childrenOf(pid)).toEqual([]);
  expect(statusKb(pid, 'VmHWM') / 1024).toBeLessThan(FOOTPRINT_AIM_MB);

  const auth = { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' };
  const mailer = await fetch(`${api}/v1/mailer/smtp`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({
      name: 'compiled',
      email: 'me@compiled.test',
      connection_type: 'basic',
      config: {
        host: '127.0.0.1',
        port: receiver.port,
        username: 'compiled-user',
        password: 'compiled-pass',
      },
    }),
  });
  expect(mailer.status).toBe(201);
  const { mailer_id } = (await mailer.json()) as { mailer_id: string };
  const sent = await fetch(`${api}/v1/email/send`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({
      mailer_id,
      from: { email: 'me@compiled.test' },
      to: [{ email: 'you@example.test' }],
      subject: 'Compiled hello',
      content: [{ type: 'text/plain', value: 'Sent by dist/bin/mailyard.js.' }],
    }),
  });
  expect(sent.status).toBe(200);
  const { ref_id } = (await sent.json()) as { ref_id: string };

  const message = await eventually(() => receiver.messages[0], 'the email at the SMTP server', 90_000);
  expect(message.to).toEqual(['you@example.test']);
  expect(message.user).toBe('compiled-user');
  expect(message.raw.toString()).toContain('Subject: Compiled hello');
  const entry = await eventually(async () => {
    const res = await fetch(`${api}/v1/email/logs?refId=${ref_id}`, { headers: auth });
    const row = ((await res.json()) as { data: Array<{ status: string }> }).data[0];
    return row?.status === 'MAIL_DELIVERED' ? row : null;
  }, 'the log entry delivered');
  expect(entry).toMatchObject({ recipient: 'you@example.test', status: 'MAIL_DELIVERED' });

  server.child.kill('SIGTERM');
  expect(await server.exited).toEqual({ code: 0, signal: null });
});
