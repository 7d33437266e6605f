import { mkdtempSync, rmSync } from 'node:fs';
import { type Socket, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Spawned, apiUrl, opsUrl, spawnTs, startOnFreePort } from '../process';
import { createTestDatabase, createTestVhost, serverEnv } from '../servers';

const KEY = 'myk_process_test_bootstrap_key_0123456789abcdef';
const auth = { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' };

jest.setTimeout(240_000);

/**
 * /metrics is served on the process's ops port only: each public port answers it 404 (the
 * envelope of any unknown path), the ops port with every route's counts (`route` names one).
 */
async function expectMetricsOnOpsPortOnly(p: Spawned, publicUrls: string[], route: string): Promise<void> {
  for (const url of publicUrls) {
    const res = await fetch(`${url}/metrics`);
    expect({ url, status: res.status, body: await res.json() }).toEqual({
      url,
      status: 404,
      body: { success: false, error: 'Not found' },
    });
  }
  const ops = opsUrl(p);
  expect(publicUrls).not.toContain(ops);
  const metrics = await fetch(`${ops}/metrics`);
  expect(metrics.status).toBe(200);
  expect(metrics.headers.get('content-type')).toMatch(/^text\/plain/);
  const text = await metrics.text();
  expect(text).toContain('mailyard_process_cpu_seconds_total');
  expect(text).toMatch(
    new RegExp(`^mailyard_http_request_duration_seconds_count\\{[^}]*route="${route}"[^}]*\\} [1-9]`, 'm'),
  );
  expect(await (await fetch(`${ops}/healthz`)).json()).toEqual({ status: 'ok' });
  expect(await (await fetch(`${ops}/readyz`)).json()).toMatchObject({ status: 'ready' });
}

/** A TCP server that accepts connections and never says a word (an SMTP server that hangs). */
async function startSilentServer() {
  const sockets: Socket[] = [];
  const server = createServer((s) => {
    sockets.push(s);
    s.on('error', () => {}).resume();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : 0,
    /** Resolves once `n` connections arrived: the request using it is under way. */
    async connected(n: number, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      while (sockets.length < n) {
        if (Date.now() > deadline) throw new Error(`silent server: ${sockets.length} of ${n} connections`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** POST /v1/smtpbasic/verify against 127.0.0.1:<port>; resolves with status and body. */
async function verifySmtp(api: string, port: number): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${api}/v1/smtpbasic/verify`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({
      name: 'Hanging',
      email: 'u@smtp.test',
      config: { host: '127.0.0.1', port, username: 'u@smtp.test', password: 'pw', secure: 'None' },
    }),
  });
  return { status: res.status, body: await res.json() };
}

describe('running the processes', () => {
  it('refuses an invalid configuration with one clear line', async () => {
    const p = spawnTs('scripts/start.ts', { PORT: 'abc' });
    const { code } = await p.exited;
    expect(code).toBe(1);
    expect(p.output().trim()).toBe(
      'Invalid configuration: PORT must be a port number from 0 to 65535 (got "abc")',
    );
  });

  it.each([
    ['scripts/start.ts', 'SEND_MAX_ATTEMPTS', 'many', 'must be a positive integer'],
    ['services/send/src/main.ts', 'PHISHING_MAX_LINKS', '0', 'must be a positive integer'],
    ['services/gateway/src/main.ts', 'DOMAIN_CHECK_TICK_MS', 'soon', 'must be a positive integer'],
    [
      'services/webhook-dispatcher/src/main.ts',
      'WEBHOOK_RETRY_DELAYS',
      '5,x',
      'must be a comma-separated list of seconds (numbers >= 0)',
    ],
  ])(
    '%s refuses an invalid service setting (%s) with one clear line',
    async (script, name, value, message) => {
      // Checked before any store is opened: the unreachable servers are never waited for.
      const p = spawnTs(script, {
        [name]: value,
        DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
        AMQP_URL: '',
        REDIS_URL: '',
      });
      const { code } = await p.exited;
      expect(code).toBe(1);
      expect(p.output().trim()).toBe(`Invalid configuration: ${name} ${message} (got "${value}")`);
    },
  );

  it('runs embedded with data kept in DATA_DIR across restarts, and drains in-flight work on SIGTERM', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'mailyard-data-'));
    const silent = await startSilentServer();
    try {
      const env = {
        DATA_DIR: dataDir,
        PORT: '0',
        TRACKING_PORT: '0',
        SMTP_PORT: '0',
        BOOTSTRAP_API_KEY: KEY,
        DATABASE_URL: '',
        AMQP_URL: '',
        REDIS_URL: '',
        MAILER_ALLOW_PRIVATE_HOSTS: '1',
        // The in-flight request below lasts this long; the drain allows far more.
        SMTP_VERIFY_TIMEOUT_MS: '3000',
        SHUTDOWN_TIMEOUT_MS: '120000',
      };
      const first = spawnTs('scripts/start.ts', env);
      await first.waitFor(/Mailyard mailyard started \(embedded mode\)/, 120_000);
      const api = apiUrl(first);
      expect(first.output()).toContain(join(dataDir, 'pg'));
      const created = await fetch(`${api}/v1/email/template`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ name: 'kept', subject: 's', content: [{ type: 'text/plain', value: 'v' }] }),
      });
      expect(created.status).toBe(201);
      const { template_id } = (await created.json()) as { template_id: string };
      // Every service's counts in one process: on its ops port, never on the API or tracking port.
      const tracking = /tracking (http:\/\/127\.0\.0\.1:\d+) /.exec(first.output())![1]!;
      await expectMetricsOnOpsPortOnly(first, [api, tracking], '/v1/email/template');

      // Real in-flight work: an SMTP verification waiting on a server that never greets. SIGTERM
      // arrives while it is under way; the drain lets it finish (its own timeout, a 422) first.
      const inFlight = verifySmtp(api, silent.port);
      await silent.connected(1);
      first.child.kill('SIGTERM');
      const answered = await inFlight;
      expect(answered.status).toBe(422);
      expect(answered.body).toMatchObject({
        success: false,
        error: 'The SMTP server did not answer in time',
      });
      expect(await first.exited).toEqual({ code: 0, signal: null });
      expect(first.output()).not.toContain('shutdown timed out');

      const second = spawnTs('scripts/start.ts', env);
      await second.waitFor(/started/, 120_000);
      const got = await fetch(`${apiUrl(second)}/v1/email/template/${template_id}`, { headers: auth });
      expect(got.status).toBe(200);
      expect(((await got.json()) as { template: { name: string } }).template.name).toBe('kept');
      second.child.kill('SIGTERM');
      expect((await second.exited).code).toBe(0);
    } finally {
      await silent.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 300_000);

  it('exits 1 when the drain overruns SHUTDOWN_TIMEOUT_MS', async () => {
    const db = await createTestDatabase();
    const vhost = createTestVhost();
    const silent = await startSilentServer();
    try {
      const p = spawnTs('services/gateway/src/main.ts', {
        ...serverEnv(db, vhost),
        PORT: '0',
        BOOTSTRAP_API_KEY: KEY,
        MAILER_ALLOW_PRIVATE_HOSTS: '1',
        // A request that would take two minutes against a drain allowed one second.
        SMTP_VERIFY_TIMEOUT_MS: '120000',
        SHUTDOWN_TIMEOUT_MS: '1000',
      });
      await p.waitFor(/Mailyard gateway started \(servers mode\)/);
      const inFlight = verifySmtp(apiUrl(p), silent.port).then(
        () => 'answered',
        () => 'cut off',
      );
      await silent.connected(1);
      p.child.kill('SIGTERM');
      expect(await p.exited).toEqual({ code: 1, signal: null });
      expect(p.output()).toContain('shutdown timed out');
      expect(await inFlight).toBe('cut off'); // the unfinished request died with the process
    } finally {
      await silent.close();
      await db.drop();
      await vhost.drop();
    }
  });

  it('starts the send service alone with its own health and metrics port', async () => {
    const db = await createTestDatabase();
    const vhost = createTestVhost();
    try {
      // OPS_PORT=0 (spawnTs's default): any free port, named in the banner.
      const p = spawnTs('services/send/src/main.ts', serverEnv(db, vhost));
      await p.waitFor(/Mailyard send started \(servers mode\)/);
      const ops = opsUrl(p);
      const ready = await fetch(`${ops}/readyz`);
      expect(await ready.json()).toEqual({ status: 'ready', checks: { db: 'ok', bus: 'ok', kv: 'ok' } });
      const metrics = await (await fetch(`${ops}/metrics`)).text();
      expect(metrics).toContain('mailyard_process_cpu_seconds_total');
      p.child.kill('SIGTERM');
      expect((await p.exited).code).toBe(0);
    } finally {
      await db.drop();
      await vhost.drop();
    }
  });

  it('starts the gateway alone against the real servers', async () => {
    const db = await createTestDatabase();
    const vhost = createTestVhost();
    try {
      const p = spawnTs('services/gateway/src/main.ts', {
        PORT: '0',
        ...serverEnv(db, vhost),
        BOOTSTRAP_API_KEY: KEY,
      });
      await p.waitFor(/Mailyard gateway started \(servers mode\)/);
      const base = apiUrl(p);
      const ready = await fetch(`${base}/readyz`);
      expect(await ready.json()).toEqual({ status: 'ready', checks: { db: 'ok', bus: 'ok', kv: 'ok' } });
      const list = await fetch(`${base}/v1/email/templates`, { headers: auth });
      expect(list.status).toBe(200);
      expect(p.output()).not.toContain('guest:guest');
      await expectMetricsOnOpsPortOnly(p, [base], '/v1/email/templates');
      p.child.kill('SIGTERM');
      expect((await p.exited).code).toBe(0);
    } finally {
      await db.drop();
      await vhost.drop();
    }
  });

  it('starts the tracking service alone against the real servers', async () => {
    const db = await createTestDatabase();
    const vhost = createTestVhost();
    try {
      const { p, port } = await startOnFreePort(
        (port) =>
          spawnTs('services/tracking/src/main.ts', { TRACKING_PORT: String(port), ...serverEnv(db, vhost) }),
        /Mailyard tracking started \(servers mode\)/,
      );
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
      expect(await ready.json()).toEqual({ status: 'ready', checks: { db: 'ok', bus: 'ok', kv: 'ok' } });
      const bad = await fetch(`http://127.0.0.1:${port}/c/not-a-token`, { redirect: 'manual' });
      expect(bad.status).toBe(404);
      await expectMetricsOnOpsPortOnly(p, [`http://127.0.0.1:${port}`], '/c/:token');
      p.child.kill('SIGTERM');
      expect((await p.exited).code).toBe(0);
    } finally {
      await db.drop();
      await vhost.drop();
    }
  });

  it('refuses an invalid tracking setting with one clear line', async () => {
    const p = spawnTs('services/tracking/src/main.ts', {
      TRACKING_TRUST_PROXY: 'somewhere',
      TRACKING_PORT: '0',
      SMTP_PORT: '0',
      DATABASE_URL: '',
      AMQP_URL: '',
      REDIS_URL: '',
      DATA_DIR: 'memory://',
    });
    const { code } = await p.exited;
    expect(code).toBe(1);
    expect(p.output()).toContain(
      'Invalid configuration: TRACKING_TRUST_PROXY must be false, true, a hop count',
    );
  });
});
