/**
 * Fresh stores for one test file, so files never see each other's data: a PostgreSQL database,
 * a RabbitMQ vhost and a Redis key prefix on the shared servers (see servers.ts), or the
 * embedded stand-ins (PGlite, memory bus, memory kv) for mode 'embedded'.
 */
import type { Mode } from './modes';
import {
  REDIS_URL,
  TEST_SECRET_KEY,
  type TestDatabase,
  type TestVhost,
  createTestDatabase,
  createTestVhost,
  serverEnv,
  testRedisPrefix,
} from './servers';

export type { Mode };
export type Env = Record<string, string | undefined>;

export interface SharedStores {
  env: Env;
  drop(): Promise<void>;
}

/** Fresh stores for one test file: a PG database, a RabbitMQ vhost and a Redis prefix, or embedded. */
export async function createSharedStores(mode: Mode): Promise<SharedStores> {
  if (mode === 'embedded') {
    return {
      env: { DATABASE_URL: '', AMQP_URL: '', REDIS_URL: '', DATA_DIR: 'memory://' },
      drop: async () => {},
    };
  }
  const db = await createTestDatabase();
  const vhost = createTestVhost();
  return {
    env: serverEnv(db, vhost),
    async drop() {
      await db.drop();
      await vhost.drop();
    },
  };
}

export interface Stores {
  env: Record<string, string>;
  db: TestDatabase;
  vhost: TestVhost;
  drop(): Promise<void>;
}

/** A fresh PostgreSQL database and RabbitMQ vhost for one test file (the real servers only). */
export async function createStores(): Promise<Stores> {
  const db = await createTestDatabase();
  const vhost = createTestVhost();
  return {
    env: {
      DATABASE_URL: db.url,
      AMQP_URL: vhost.url,
      REDIS_URL,
      REDIS_KEY_PREFIX: testRedisPrefix(),
      SECRET_KEY: TEST_SECRET_KEY,
      SERVICE_DOMAIN: 'mailyard.test',
    },
    db,
    vhost,
    async drop() {
      await db.drop();
      await vhost.drop();
    },
  };
}
