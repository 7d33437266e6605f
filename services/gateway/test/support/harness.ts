import type { Server } from 'node:http';
import {
  type Config,
  type ServiceContext,
  closeContext,
  configFrom,
  createLogger,
  openContext,
} from '@mailyard/platform';
import { createTenant } from '@mailyard/store';
import type { Express } from 'express';
import {
  REDIS_URL,
  TEST_SECRET_KEY,
  type TestDatabase,
  type TestVhost,
  createTestDatabase,
  createTestVhost,
  testRedisPrefix,
} from '../../../../test/support/servers';
import { buildGatewayApp } from '../../src/app';

export type Mode = 'embedded' | 'servers';

export interface TestGateway {
  ctx: ServiceContext;
  app: Express;
  config: Config;
  /** Creates a tenant and returns its API key. */
  newTenant(tier?: 'standard' | 'enterprise'): Promise<{ tenantId: string; apiKey: string; keyId: string }>;
  close(): Promise<void>;
}

export interface SharedStores {
  env: Record<string, string | undefined>;
  drop(): Promise<void>;
}

/** Fresh stores for one test file: a PG database, a RabbitMQ vhost and a Redis prefix, or embedded. */
export async function createStores(mode: Mode): Promise<SharedStores> {
  if (mode === 'embedded') {
    return {
      env: { DATABASE_URL: '', AMQP_URL: '', REDIS_URL: '', DATA_DIR: 'memory://' },
      drop: async () => {},
    };
  }
  const db: TestDatabase = await createTestDatabase();
  const vhost: TestVhost = createTestVhost();
  return {
    env: {
      DATABASE_URL: db.url,
      AMQP_URL: vhost.url,
      REDIS_URL,
      REDIS_KEY_PREFIX: testRedisPrefix(),
      SECRET_KEY: TEST_SECRET_KEY,
    },
    async drop() {
      await db.drop();
      await vhost.drop();
    },
  };
}

/** A gateway app over the given stores (several instances may share one set, like replicas). */
export async function startGateway(
  stores: SharedStores,
  env: Record<string, string | undefined> = {},
): Promise<TestGateway> {
  const config = configFrom({ LOG_LEVEL: 'error', API_KEY_CACHE_MS: '0', ...stores.env, ...env });
  const logger = createLogger('gateway-test', process.env.TEST_LOG_LEVEL ?? 'error');
  const ctx = await openContext(config, logger);
  return {
    ctx,
    config,
    app: buildGatewayApp(ctx),
    async newTenant(tier = 'standard') {
      const t = await createTenant(ctx.db, {
        name: `tenant-${Math.random().toString(36).slice(2, 8)}`,
        tier,
      });
      return { tenantId: t.id, apiKey: t.apiKey, keyId: t.keyId };
    },
    close: () => closeContext(ctx),
  };
}

export const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });

export type { Server };
