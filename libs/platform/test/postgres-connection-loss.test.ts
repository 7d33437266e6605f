/**
 * A PostgreSQL restart terminates every backend (57P01). A client checked out of the pool for a
 * transaction gets that notice between statements as an 'error' event, which used to have no
 * listener and killed the process. The backend is terminated here with pg_terminate_backend on a
 * private test database (the same server message a restart sends), in a child process so that a
 * crash shows as an exit.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { eventually } from '@mailyard/testkit/eventually';
import { REPO_ROOT } from '@mailyard/testkit/process';
import { type TestDatabase, createTestDatabase } from '@mailyard/testkit/servers';
import pg from 'pg';

jest.setTimeout(60_000);

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});

afterAll(async () => {
  await database?.drop();
});

it('a transaction whose connection is terminated rejects, the process lives and the pool recovers', async () => {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(__dirname, 'fixtures', 'pg-terminate-child.ts')],
    { cwd: REPO_ROOT, env: { ...process.env, DATABASE_URL: database.url }, stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));

  const pid = await new Promise<number>((resolve, reject) => {
    const timer = setInterval(() => {
      const m = /PID (\d+)/.exec(out);
      if (m) {
        clearInterval(timer);
        resolve(Number(m[1]));
      } else if (child.exitCode !== null) {
        clearInterval(timer);
        reject(new Error(`child exited early:\n${out}`));
      }
    }, 20);
  });
  const admin = new pg.Client({ connectionString: database.url });
  await admin.connect();
  try {
    const { rows } = await admin.query<{ ok: boolean }>('SELECT pg_terminate_backend($1) AS ok', [pid]);
    expect(rows[0]!.ok).toBe(true);
    // The backend writes its termination notice to the child's socket before it exits: once it
    // is gone, the notice is there before the 'go' below.
    await eventually(
      async () => (await admin.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [pid])).rowCount === 0,
      'the terminated backend to exit',
    );
  } finally {
    await admin.end();
  }
  child.stdin.write('go\n');

  expect(await exited).toBe(0);
  expect(out).not.toContain("Unhandled 'error' event");
  expect(out).toMatch(/TRANSACTION rejected: .*(terminat|Connection terminated|not queryable)/);
  expect(out).toContain('POOL OK');
});
