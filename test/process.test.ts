import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, spawnTs } from './support/process';
import { createTestDatabase, createTestVhost, serverEnv } from './support/servers';

const KEY = 'myk_process_test_bootstrap_key_0123456789abcdef';
const auth = { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' };

describe('running the processes', () => {
  it('refuses an invalid configuration with one clear line', async () => {
    const p = spawnTs('scripts/start.ts', { PORT: 'abc' });
    const { code } = await p.exited;
    expect(code).toBe(1);
    expect(p.output().trim()).toBe(
      'Invalid configuration: PORT must be a port number from 0 to 65535 (got "abc")',
    );
  });

  it('runs embedded with data kept in DATA_DIR across restarts, and drains on SIGTERM', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'mailyard-data-'));
    try {
      const port = await freePort();
      const env = {
        DATA_DIR: dataDir,
        PORT: String(port),
        TRACKING_PORT: '0',
        BOOTSTRAP_API_KEY: KEY,
        DATABASE_URL: '',
        AMQP_URL: '',
        REDIS_URL: '',
      };
      const first = spawnTs('scripts/start.ts', env);
      await first.waitFor(/Mailyard mailyard started \(embedded mode\)/, 120_000);
      expect(first.output()).toContain(`http://127.0.0.1:${port}/v1`);
      expect(first.output()).toContain(join(dataDir, 'pg'));
      const created = await fetch(`http://127.0.0.1:${port}/v1/email/template`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ name: 'kept', subject: 's', content: [{ type: 'text/plain', value: 'v' }] }),
      });
      expect(created.status).toBe(201);
      const { template_id } = (await created.json()) as { template_id: string };
      first.child.kill('SIGTERM');
      expect(await first.exited).toEqual({ code: 0, signal: null });

      const second = spawnTs('scripts/start.ts', env);
      await second.waitFor(/started/, 120_000);
      const got = await fetch(`http://127.0.0.1:${port}/v1/email/template/${template_id}`, { headers: auth });
      expect(got.status).toBe(200);
      expect(((await got.json()) as { template: { name: string } }).template.name).toBe('kept');
      second.child.kill('SIGTERM');
      expect((await second.exited).code).toBe(0);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 300_000);

  it('starts the send service alone with its own health and metrics port', async () => {
    const db = await createTestDatabase();
    const vhost = createTestVhost();
    try {
      const opsPort = await freePort();
      const p = spawnTs('services/send/src/main.ts', { OPS_PORT: String(opsPort), ...serverEnv(db, vhost) });
      await p.waitFor(/Mailyard send started \(servers mode\)/);
      const ready = await fetch(`http://127.0.0.1:${opsPort}/readyz`);
      expect(await ready.json()).toEqual({ status: 'ready', checks: { db: 'ok', bus: 'ok', kv: 'ok' } });
      const metrics = await (await fetch(`http://127.0.0.1:${opsPort}/metrics`)).text();
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
      const port = await freePort();
      const p = spawnTs('services/gateway/src/main.ts', {
        PORT: String(port),
        ...serverEnv(db, vhost),
        BOOTSTRAP_API_KEY: KEY,
      });
      await p.waitFor(/Mailyard gateway started \(servers mode\)/);
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
      expect(await ready.json()).toEqual({ status: 'ready', checks: { db: 'ok', bus: 'ok', kv: 'ok' } });
      const list = await fetch(`http://127.0.0.1:${port}/v1/email/templates`, { headers: auth });
      expect(list.status).toBe(200);
      expect(p.output()).not.toContain('guest:guest');
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
      const port = await freePort();
      const p = spawnTs('services/tracking/src/main.ts', {
        TRACKING_PORT: String(port),
        ...serverEnv(db, vhost),
      });
      await p.waitFor(/Mailyard tracking started \(servers mode\)/);
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
      expect(await ready.json()).toEqual({ status: 'ready', checks: { db: 'ok', bus: 'ok', kv: 'ok' } });
      const bad = await fetch(`http://127.0.0.1:${port}/c/not-a-token`, { redirect: 'manual' });
      expect(bad.status).toBe(404);
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
