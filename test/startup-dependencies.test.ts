/**
 * A service started while its database is down keeps retrying (one log line per try, with the
 * reason), answers /healthz 200 and /readyz 503 on its port meanwhile, never exits, and starts
 * normally once the database answers. The gateway and the send service run as their own
 * processes against a private PostgreSQL that this test starts late (the shared one is never
 * stopped), the shared RabbitMQ (own vhost) and Redis (own prefix).
 */
import {
  type PrivatePostgres,
  startPrivatePostgres,
  startPrivateRabbit,
  startPrivateRedis,
} from '@mailyard/testkit/private-servers';
import { type Spawned, freePort, spawnTs } from '@mailyard/testkit/process';
import {
  REDIS_URL,
  TEST_SECRET_KEY,
  type TestVhost,
  createTestVhost,
  testRedisPrefix,
} from '@mailyard/testkit/servers';

jest.setTimeout(180_000);

const KEY = 'myk_startup_test_bootstrap_key_0123456789abcdefgh';

let postgres: PrivatePostgres;
let vhost: TestVhost;
const processes: Spawned[] = [];

beforeAll(async () => {
  postgres = await startPrivatePostgres();
  await postgres.createDatabase('mailyard');
  await postgres.stop();
  vhost = createTestVhost();
});

afterAll(async () => {
  for (const p of processes) {
    if (p.child.exitCode === null && p.child.signalCode === null) {
      p.child.kill('SIGKILL');
      await p.exited;
    }
  }
  await postgres?.destroy();
  await vhost?.drop();
});

async function get(url: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url, { headers: { Authorization: `Bearer ${KEY}` } });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function eventually<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline)
      throw new Error(`${what} within ${timeoutMs} ms (last error: ${String(last)})`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

it('gateway and send service wait for a database that is down, answering health checks, then start', async () => {
  const env = {
    DATABASE_URL: postgres.databaseUrl('mailyard'),
    AMQP_URL: vhost.url,
    REDIS_URL,
    REDIS_KEY_PREFIX: testRedisPrefix(),
    SECRET_KEY: TEST_SECRET_KEY,
    BOOTSTRAP_API_KEY: KEY,
  };
  const port = await freePort();
  const opsPort = await freePort();
  const gateway = spawnTs('services/gateway/src/main.ts', { ...env, PORT: String(port) });
  const send = spawnTs('services/send/src/main.ts', { ...env, OPS_PORT: String(opsPort) });
  processes.push(gateway, send);

  // Both keep retrying, say why, and answer on their ports.
  for (const p of [gateway, send]) {
    await p.waitFor(
      /the database not available; retrying[\s\S]*the database not available; retrying/,
      60_000,
    );
    expect(p.output()).toMatch(/ECONNREFUSED/);
  }
  for (const base of [`http://127.0.0.1:${port}`, `http://127.0.0.1:${opsPort}`]) {
    expect((await get(`${base}/healthz`)).status).toBe(200);
    const ready = await get(`${base}/readyz`);
    expect(ready.status).toBe(503);
    expect(ready.body).toMatchObject({
      status: 'not ready',
      checks: { db: expect.stringMatching(/^failing: starting: .*ECONNREFUSED/) },
    });
  }
  const early = await get(`http://127.0.0.1:${port}/v1/email/templates`);
  expect(early.status).toBe(503);
  expect(early.body).toEqual({ success: false, error: expect.stringMatching(/^Service is starting/) });
  expect(gateway.child.exitCode).toBeNull();
  expect(send.child.exitCode).toBeNull();

  await postgres.start();

  await gateway.waitFor(/Mailyard gateway started \(servers mode\)/, 90_000);
  await send.waitFor(/Mailyard send started \(servers mode\)/, 90_000);
  for (const base of [`http://127.0.0.1:${port}`, `http://127.0.0.1:${opsPort}`]) {
    const ready = await eventually('ready', async () => {
      const r = await get(`${base}/readyz`);
      return r.status === 200 ? r : undefined;
    });
    expect(ready.body).toEqual({ status: 'ready', checks: { db: 'ok', bus: 'ok', kv: 'ok' } });
  }
  const list = await get(`http://127.0.0.1:${port}/v1/email/templates`);
  expect(list.status).toBe(200);

  gateway.child.kill('SIGTERM');
  send.child.kill('SIGTERM');
  expect((await gateway.exited).code).toBe(0);
  expect((await send.exited).code).toBe(0);
});

it('a process stopped with SIGTERM while still waiting for its database exits 0', async () => {
  if (postgres.running()) await postgres.stop();
  const port = await freePort();
  const gateway = spawnTs('services/gateway/src/main.ts', {
    DATABASE_URL: postgres.databaseUrl('mailyard'),
    AMQP_URL: vhost.url,
    REDIS_URL,
    REDIS_KEY_PREFIX: testRedisPrefix(),
    SECRET_KEY: TEST_SECRET_KEY,
    PORT: String(port),
  });
  processes.push(gateway);
  await gateway.waitFor(/the database not available; retrying/, 60_000);
  expect((await get(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
  gateway.child.kill('SIGTERM');
  expect(await gateway.exited).toEqual({ code: 0, signal: null });
});

it('a gateway started while RabbitMQ and Redis are down waits for the bus, starts, and is ready once Redis answers', async () => {
  if (!postgres.running()) await postgres.start();
  const [rabbit, redis] = await Promise.all([startPrivateRabbit(), startPrivateRedis()]);
  try {
    await Promise.all([rabbit.stop(), redis.stop()]);
    const port = await freePort();
    const gateway = spawnTs('services/gateway/src/main.ts', {
      DATABASE_URL: postgres.databaseUrl('mailyard'),
      AMQP_URL: rabbit.url,
      REDIS_URL: redis.url,
      SECRET_KEY: TEST_SECRET_KEY,
      BOOTSTRAP_API_KEY: KEY,
      PORT: String(port),
    });
    processes.push(gateway);
    const base = `http://127.0.0.1:${port}`;
    await gateway.waitFor(/AMQP connection failed; retrying/, 60_000);
    expect((await get(`${base}/healthz`)).status).toBe(200);
    const waiting = await get(`${base}/readyz`);
    expect(waiting.status).toBe(503);
    expect(waiting.body).toMatchObject({
      checks: { db: 'ok', bus: expect.stringMatching(/^failing: starting/) },
    });

    await rabbit.start();
    await gateway.waitFor(/Mailyard gateway started \(servers mode\)/, 120_000);
    expect(gateway.output()).toMatch(/kv not reachable at start; rate limits fail open/);
    const noKv = await get(`${base}/readyz`);
    expect(noKv.status).toBe(503);
    expect(noKv.body).toMatchObject({
      checks: { db: 'ok', bus: 'ok', kv: expect.stringMatching(/^failing/) },
    });
    expect((await get(`${base}/v1/email/templates`)).status).toBe(200);

    await redis.start();
    await eventually('ready with Redis back', async () => {
      const r = await get(`${base}/readyz`);
      return r.status === 200 ? r : undefined;
    });
    gateway.child.kill('SIGTERM');
    expect((await gateway.exited).code).toBe(0);
  } finally {
    await Promise.all([rabbit.destroy(), redis.destroy()]);
  }
});
