/**
 * First run (issue 13): `pnpm start` on embedded defaults with no tenant creates one, prints its
 * API key once with shell lines that send a first email; pasting those lines (SMTP line edited to
 * point at a local SMTP server) really sends the email. A second start prints no key.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type SmtpReceiver, startSmtpReceiver } from '@mailyard/testkit/peers/smtp-receiver';
import { REPO_ROOT, type Spawned, spawnTs } from '@mailyard/testkit/process';

jest.setTimeout(240_000);

let dataDir: string;
let receiver: SmtpReceiver;
const running: Spawned[] = [];

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'mailyard-first-run-'));
  receiver = await startSmtpReceiver({ auth: { user: 'first-user', pass: 'first-pass' } });
});
afterAll(async () => {
  for (const p of running) {
    if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGTERM');
    await p.exited;
  }
  await receiver?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const env = {
  DATA_DIR: '',
  PORT: '0',
  TRACKING_PORT: '0',
  DATABASE_URL: '',
  AMQP_URL: '',
  REDIS_URL: '',
  BOOTSTRAP_API_KEY: '',
  MAILER_ALLOW_PRIVATE_HOSTS: '1',
};

async function start(): Promise<Spawned> {
  const p = spawnTs('scripts/start.ts', { ...env, DATA_DIR: dataDir });
  running.push(p);
  await p.waitFor(/Mailyard mailyard started \(embedded mode\)[\s\S]*kv:/, 120_000);
  return p;
}

async function stop(p: Spawned) {
  p.child.kill('SIGTERM');
  await p.exited;
}

it('creates a tenant, prints its key once, and the printed commands send a first email', async () => {
  const first = await start();
  const out = await first.waitFor(/={20,}\n(export MAILYARD_URL=[\s\S]*?)\n={20,}/, 30_000);
  const key = /^ {3}(\S+)$/m.exec(first.output())?.[1];
  expect(key).toBeDefined();
  const lines = /={20,}\n(export MAILYARD_URL=[\s\S]*?)\n={20,}/.exec(out)![1]!.split('\n');
  expect(lines[0]).toContain(`MAILYARD_API_KEY=${key}`);
  expect(lines[1]).toMatch(/^SMTP_HOST=smtp\.example\.com /);
  // What a user does: edit the SMTP line, paste the rest as printed.
  lines[1] = `SMTP_HOST=127.0.0.1 SMTP_PORT=${receiver.port} SMTP_USER=first-user SMTP_PASS=first-pass FROM=me@first-run.test TO=you@example.test`;
  const shell = execFileSync('bash', ['-euo', 'pipefail', '-c', lines.join('\n')], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    timeout: 60_000,
  });
  expect(shell).toMatch(/"success":true,"ref_id":"[^"]+","message":"queued"/);

  const deadline = Date.now() + 90_000;
  while (receiver.messages.length === 0 && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 200));
  expect(receiver.messages).toHaveLength(1);
  expect(receiver.messages[0]!.to).toEqual(['you@example.test']);
  expect(receiver.messages[0]!.user).toBe('first-user');
  expect(receiver.messages[0]!.raw.toString()).toContain('Subject: Hello from Mailyard');
  await stop(first);

  // Second start: the tenant exists; no new key is printed, the old one still works.
  const second = await start();
  expect(second.output()).not.toContain('First run');
  const api = /API (http:\/\/127\.0\.0\.1:\d+)\/v1/.exec(second.output())![1];
  const res = await fetch(`${api}/v1/email/templates`, { headers: { Authorization: `Bearer ${key}` } });
  expect(res.status).toBe(200);
  await stop(second);
});
