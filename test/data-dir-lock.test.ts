/**
 * Embedded mode serves one process per DATA_DIR (issue 15): a second `pnpm start`, `pnpm cli` or
 * `pnpm migrate` on a directory a running server holds is refused at once with a message naming
 * the directory and the holder's pid; the running server keeps answering and keeps its data; a
 * lock left by a process that died (SIGKILL) is taken over by the next start.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Spawned, spawnTs } from '@mailyard/testkit/process';

jest.setTimeout(180_000);

const KEY = 'myk_data_dir_lock_test_bootstrap_key_0123456789ab';
const auth = { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' };

let dataDir: string;
const running: Spawned[] = [];

beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'mailyard-lock-'));
});

afterEach(async () => {
  for (const p of running.splice(0)) {
    if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    await p.exited;
  }
  rmSync(dataDir, { recursive: true, force: true });
});

const env = () => ({
  DATA_DIR: dataDir,
  PORT: '0',
  TRACKING_PORT: '0',
  SMTP_PORT: '0',
  BOOTSTRAP_API_KEY: KEY,
  DATABASE_URL: '',
  AMQP_URL: '',
  REDIS_URL: '',
});

/** Starts `pnpm start` (scripts/start.ts) and returns it with the API base URL from its banner. */
async function startServer(): Promise<{ p: Spawned; api: string }> {
  const p = spawnTs('scripts/start.ts', env());
  running.push(p);
  await p.waitFor(/Mailyard mailyard started \(embedded mode\)/, 90_000);
  const api = /API (http:\/\/127\.0\.0\.1:\d+\/v1)/.exec(p.output())?.[1];
  if (!api) throw new Error(`no API URL in the banner:\n${p.output()}`);
  return { p, api };
}

async function createTemplate(api: string, name: string): Promise<string> {
  const res = await fetch(`${api}/email/template`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ name, subject: 's', content: [{ type: 'text/plain', value: 'v' }] }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { template_id: string }).template_id;
}

async function templateNames(api: string): Promise<string[]> {
  const res = await fetch(`${api}/email/templates`, { headers: auth });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { templates: Array<{ name: string }> };
  return body.templates.map((t) => t.name).sort();
}

/** The refusal every second process prints: directory, holder pid, and what to do instead. */
function expectRefused(out: string, holderPid: number): void {
  expect(out).toContain(`DATA_DIR ${dataDir} is in use by another Mailyard process (pid ${holderPid})`);
  expect(out).toContain('stop that process first');
  expect(out).toContain('set DATABASE_URL');
}

it('refuses a second server, `pnpm cli` and `pnpm migrate` on a held directory; the first keeps serving its data', async () => {
  const first = await startServer();
  const holder = first.p.child.pid!;
  await createTemplate(first.api, 'before');

  const second = spawnTs('scripts/start.ts', env());
  running.push(second);
  expect(await second.exited).toEqual({ code: 1, signal: null });
  expectRefused(second.output(), holder);
  expect(second.output()).not.toContain('started');

  const cli = spawnTs('scripts/cli.ts', env(), ['tenant:create', 'intruder']);
  running.push(cli);
  expect(await cli.exited).toEqual({ code: 1, signal: null });
  expectRefused(cli.output(), holder);
  expect(cli.output()).not.toContain('api_key');

  const migrate = spawnTs('scripts/migrate.ts', env());
  running.push(migrate);
  expect(await migrate.exited).toEqual({ code: 1, signal: null });
  expectRefused(migrate.output(), holder);

  // The first process is unharmed: it still answers, reads and writes.
  await createTemplate(first.api, 'after');
  expect(await templateNames(first.api)).toEqual(['after', 'before']);
  expect(JSON.parse(readFileSync(join(dataDir, 'mailyard.lock'), 'utf8')).pid).toBe(holder);

  // Stopped cleanly, it releases the lock, and a restart finds every acknowledged write.
  first.p.child.kill('SIGTERM');
  expect(await first.p.exited).toEqual({ code: 0, signal: null });
  expect(existsSync(join(dataDir, 'mailyard.lock'))).toBe(false);
  const again = await startServer();
  expect(await templateNames(again.api)).toEqual(['after', 'before']);
  again.p.child.kill('SIGTERM');
  expect((await again.p.exited).code).toBe(0);
});

it('takes over the lock left by a server killed with SIGKILL, and one whose pid was reused', async () => {
  const first = await startServer();
  await createTemplate(first.api, 'survivor');
  first.p.child.kill('SIGKILL');
  await first.p.exited;
  const stale = JSON.parse(readFileSync(join(dataDir, 'mailyard.lock'), 'utf8')) as { pid: number };
  expect(stale.pid).toBe(first.p.child.pid);

  const next = await startServer();
  expect(await templateNames(next.api)).toEqual(['survivor']);
  next.p.child.kill('SIGTERM');
  expect((await next.p.exited).code).toBe(0);

  // A lock naming a live pid (this jest process) with another start time: the pid was reused.
  writeFileSync(
    join(dataDir, 'mailyard.lock'),
    JSON.stringify({ pid: process.pid, start: '1', nonce: 'old', acquired_at: '2020-01-01T00:00:00Z' }),
  );
  const cli = spawnTs('scripts/cli.ts', env(), ['tenant:create', 'after-reuse']);
  running.push(cli);
  expect(await cli.exited).toEqual({ code: 0, signal: null });
  expect(cli.output()).toContain('"api_key"');
  expect(existsSync(join(dataDir, 'mailyard.lock'))).toBe(false);
});
