/**
 * Private PostgreSQL, Redis and RabbitMQ servers on free ports, for tests that stop, restart or
 * kill them (the shared servers on the standard ports must never be touched: other test runs
 * use them). Each lives in its own temporary directory, removed by `destroy()`.
 *
 * - PostgreSQL: initdb + pg_ctl from /usr/lib/postgresql/<newest>/bin, as the `postgres` user
 *   when running as root (postgres refuses root), trust auth, Unix socket in the temp dir.
 * - Redis: `redis-server --port N --save ''` (nothing persisted; a restart starts empty).
 * - RabbitMQ: a node of its own (`RABBITMQ_NODENAME=chaos<hex>@localhost`, own AMQP and
 *   distribution ports, mnesia/log/config/cookie in the temp dir), as the `rabbitmq` user when
 *   root. Durable queues survive its restarts, as on a real broker.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { connect as netConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import amqp from 'amqplib';
import pg from 'pg';
import { freePort } from './process';

const run = promisify(execFile);
const isRoot = process.getuid?.() === 0;

export interface PrivateServer {
  /** Connection URL for clients. */
  url: string;
  port: number;
  start(): Promise<void>;
  /** Graceful stop (SIGTERM / fast shutdown); resolves once the server is gone. */
  stop(): Promise<void>;
  restart(): Promise<void>;
  running(): boolean;
  /** Stops it if running and removes its directory. */
  destroy(): Promise<void>;
}

function userIds(user: string): { uid: number; gid: number } {
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${user}:`));
  if (!line) throw new Error(`user ${user} does not exist`);
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

function chownTree(dir: string, user: string): void {
  if (!isRoot) return;
  const { uid, gid } = userIds(user);
  const walk = (p: string) => {
    chownSync(p, uid, gid);
    for (const entry of readdirSync(p, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(join(p, entry.name));
      else chownSync(join(p, entry.name), uid, gid);
    }
  };
  walk(dir);
}

/** argv to run `cmd` as `user` when we are root, as ourselves otherwise. */
function asUser(
  user: string,
  cmd: string,
  args: string[],
  env: Record<string, string> = {},
): [string, string[]] {
  const envArgs = Object.entries(env).map(([k, v]) => `${k}=${v}`);
  if (isRoot) return ['runuser', ['-u', user, '--', 'env', ...envArgs, cmd, ...args]];
  return ['env', [...envArgs, cmd, ...args]];
}

async function until(what: string, probe: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await probe().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`${what} did not come up within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** True when something accepts TCP connections on 127.0.0.1:`port`. */
export function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = netConnect({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => {
      s.destroy();
      resolve(false);
    });
  });
}

function exitOf(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

// ---------------------------------------------------------------- PostgreSQL

export interface PrivatePostgres extends PrivateServer {
  /** URL of database `name` on this server. */
  databaseUrl(name: string): string;
  createDatabase(name: string): Promise<string>;
}

function postgresBin(): string {
  const base = '/usr/lib/postgresql';
  const versions = existsSync(base)
    ? readdirSync(base)
        .filter((v) => existsSync(join(base, v, 'bin', 'pg_ctl')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (!versions[0]) throw new Error('PostgreSQL server binaries not found under /usr/lib/postgresql');
  return join(base, versions[0], 'bin');
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = postgresBin();
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'mailyard-private-pg-'));
  const data = join(dir, 'data');
  chmodSync(dir, 0o755);
  chownTree(dir, 'postgres');
  const pgRun = (cmd: string, args: string[]) => {
    const [file, argv] = asUser('postgres', join(bin, cmd), args);
    return run(file, argv, { cwd: dir });
  };
  await pgRun('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`;
  let up = false;
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const server: PrivatePostgres = {
    url,
    port,
    databaseUrl: (name) => `postgres://postgres@127.0.0.1:${port}/${name}`,
    async createDatabase(name) {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        await c.query(`CREATE DATABASE ${name}`);
      } finally {
        await c.end();
      }
      return server.databaseUrl(name);
    },
    async start() {
      await pgRun('pg_ctl', ['-D', data, '-l', join(dir, 'log'), '-o', options, '-w', '-t', '60', 'start']);
      up = true;
    },
    async stop() {
      await pgRun('pg_ctl', ['-D', data, '-m', 'fast', '-w', '-t', '60', 'stop']);
      up = false;
    },
    async restart() {
      await server.stop();
      await server.start();
    },
    running: () => up,
    async destroy() {
      if (up) await pgRun('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => {});
      up = false;
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await server.start();
  return server;
}

// ---------------------------------------------------------------- Redis

export async function startPrivateRedis(): Promise<PrivateServer> {
  const port = await freePort();
  let child: ChildProcess | null = null;
  const server: PrivateServer = {
    url: `redis://127.0.0.1:${port}`,
    port,
    async start() {
      const c = spawn(
        'redis-server',
        [
          '--port',
          String(port),
          '--bind',
          '127.0.0.1',
          '--save',
          '',
          '--appendonly',
          'no',
          '--daemonize',
          'no',
        ],
        { stdio: 'ignore' },
      );
      child = c;
      c.once('error', () => {});
      await until(`redis-server on ${port}`, () => portOpen(port), 20_000);
    },
    async stop() {
      const c = child;
      child = null;
      if (!c) return;
      c.kill('SIGTERM');
      await exitOf(c);
    },
    async restart() {
      await server.stop();
      await server.start();
    },
    running: () => child !== null,
    async destroy() {
      await server.stop();
    },
  };
  await server.start();
  return server;
}

// ---------------------------------------------------------------- RabbitMQ

export interface PrivateRabbit extends PrivateServer {
  node: string;
}

export async function startPrivateRabbit(): Promise<PrivateRabbit> {
  const port = await freePort();
  let distPort = await freePort();
  while (distPort === port) distPort = await freePort();
  const node = `chaos${randomBytes(4).toString('hex')}@localhost`;
  const dir = mkdtempSync(join(tmpdir(), 'mailyard-private-rabbit-'));
  chmodSync(dir, 0o755);
  for (const d of ['home', 'mnesia', 'log']) mkdirSync(join(dir, d));
  writeFileSync(join(dir, 'rabbitmq.conf'), 'loopback_users = none\n');
  writeFileSync(join(dir, 'rabbitmq-env.conf'), '');
  writeFileSync(join(dir, 'enabled_plugins'), '[].\n');
  const cookie = join(dir, 'home', '.erlang.cookie');
  writeFileSync(cookie, randomBytes(20).toString('hex'));
  chmodSync(cookie, 0o400);
  chownTree(dir, 'rabbitmq');
  const env: Record<string, string> = {
    HOME: join(dir, 'home'),
    RABBITMQ_NODENAME: node,
    RABBITMQ_NODE_IP_ADDRESS: '127.0.0.1',
    RABBITMQ_NODE_PORT: String(port),
    RABBITMQ_DIST_PORT: String(distPort),
    RABBITMQ_MNESIA_BASE: join(dir, 'mnesia'),
    RABBITMQ_LOG_BASE: join(dir, 'log'),
    RABBITMQ_CONFIG_FILE: join(dir, 'rabbitmq.conf'),
    RABBITMQ_CONF_ENV_FILE: join(dir, 'rabbitmq-env.conf'),
    RABBITMQ_ENABLED_PLUGINS_FILE: join(dir, 'enabled_plugins'),
    RABBITMQ_PID_FILE: join(dir, 'pid'),
  };
  const sbin = existsSync('/usr/lib/rabbitmq/bin/rabbitmq-server') ? '/usr/lib/rabbitmq/bin' : '';
  const cmd = (name: string) => (sbin ? join(sbin, name) : name);
  const url = `amqp://guest:guest@127.0.0.1:${port}`;
  let child: ChildProcess | null = null;
  const server: PrivateRabbit = {
    url,
    port,
    node,
    async start() {
      rmSync(join(dir, 'pid'), { force: true });
      const [file, argv] = asUser('rabbitmq', cmd('rabbitmq-server'), [], env);
      const c = spawn(file, argv, { cwd: dir, stdio: 'ignore' });
      child = c;
      c.once('error', () => {});
      await until(
        `RabbitMQ node ${node}`,
        async () => {
          if (c.exitCode !== null) throw new Error(`rabbitmq-server exited with ${c.exitCode}`);
          const conn = await amqp.connect(url, { timeout: 2000 });
          await conn.close();
          return true;
        },
        90_000,
      );
    },
    async stop() {
      const c = child;
      child = null;
      if (!c) return;
      const pidFile = join(dir, 'pid');
      const pid = existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8').trim()) : 0;
      if (pid > 0) {
        try {
          process.kill(pid, 'SIGTERM');
        } catch {
          // already gone
        }
      } else {
        const [file, argv] = asUser('rabbitmq', cmd('rabbitmqctl'), ['-n', node, 'stop'], env);
        await run(file, argv, { cwd: dir }).catch(() => {});
      }
      const gone = exitOf(c);
      const timer = setTimeout(() => {
        if (pid > 0) {
          try {
            process.kill(pid, 'SIGKILL');
          } catch {
            // gone
          }
        }
      }, 30_000);
      await gone;
      clearTimeout(timer);
      // The AMQP port is closed before the node has fully exited; wait for that too.
      await until(`RabbitMQ node ${node} to stop`, async () => !(await portOpen(port)), 30_000);
    },
    async restart() {
      await server.stop();
      await server.start();
    },
    running: () => child !== null,
    async destroy() {
      await server.stop().catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await server.start();
  return server;
}
