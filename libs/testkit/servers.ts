import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** Real servers on this machine (started by scripts/ensure-services.sh). Override with TEST_* env. */
export const PG_ADMIN_URL = process.env.TEST_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
export const AMQP_BASE_URL = process.env.TEST_AMQP_BASE_URL ?? 'amqp://guest:guest@127.0.0.1:5672';

/** Sealing key used by every test that runs against PostgreSQL. */
export const TEST_SECRET_KEY = '5c'.repeat(32);

export function uniqueName(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
}

export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

/** A fresh, empty PostgreSQL database for one test file. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = uniqueName('mailyard_test');
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    async drop() {
      const c = new pg.Client({ connectionString: PG_ADMIN_URL });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

export interface TestVhost {
  url: string;
  name: string;
  drop(): Promise<void>;
}

/** A fresh RabbitMQ vhost (guest has full rights on it) for one test file. */
export function createTestVhost(): TestVhost {
  const name = uniqueName('mailyard_test');
  execFileSync('rabbitmqctl', ['-q', 'add_vhost', name], { stdio: 'pipe' });
  execFileSync('rabbitmqctl', ['-q', 'set_permissions', '-p', name, 'guest', '.*', '.*', '.*'], {
    stdio: 'pipe',
  });
  return {
    url: `${AMQP_BASE_URL}/${encodeURIComponent(name)}`,
    name,
    async drop() {
      execFileSync('rabbitmqctl', ['-q', 'delete_vhost', name], { stdio: 'pipe' });
    },
  };
}

/** A Redis key prefix unique to one test file; `clean` deletes its keys. */
export function testRedisPrefix(): string {
  return `${uniqueName('mailyard_test')}:`;
}

/** Environment of a process on the real servers: this database and vhost, a fresh Redis prefix, the test key. */
export function serverEnv(db: { url: string }, vhost: { url: string }): Record<string, string> {
  return {
    DATABASE_URL: db.url,
    AMQP_URL: vhost.url,
    REDIS_URL,
    REDIS_KEY_PREFIX: testRedisPrefix(),
    SECRET_KEY: TEST_SECRET_KEY,
  };
}
