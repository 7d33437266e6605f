/**
 * The servers a benchmark runs against, one definition for every benchmark: a private database
 * and RabbitMQ vhost on the shared servers (dropped together at the end), the settings the
 * measured services get in their production form (`benchServiceEnv`), the harness's own context
 * on them (quiet logs), and the gateway's settings that make the bootstrap key an enterprise
 * tenant no rate limit slows (`bootstrapGatewayEnv`, read back with `bootstrapTenantId`).
 */
import { type ServiceContext, configFrom, createLogger, openContext } from '@mailyard/platform';
import { findKeyOwner } from '@mailyard/store';
import {
  type TestDatabase,
  type TestVhost,
  createTestDatabase,
  createTestVhost,
  serverEnv,
} from '@mailyard/testkit/servers';

export interface BenchServers {
  db: TestDatabase;
  vhost: TestVhost;
  /** DATABASE_URL, AMQP_URL, REDIS_URL (serverEnv) of the database and vhost. */
  env: Record<string, string>;
  /** Drops the database and the vhost. */
  drop(): Promise<void>;
}

export async function createBenchServers(): Promise<BenchServers> {
  const db = await createTestDatabase();
  const vhost = createTestVhost();
  return {
    db,
    vhost,
    env: serverEnv(db, vhost),
    async drop() {
      await db.drop();
      await vhost.drop();
    },
  };
}

/** The measured services' settings on `servers`: the bench's service domain, warn logs, production mode. */
export function benchServiceEnv(servers: BenchServers): Record<string, string> {
  return { ...servers.env, SERVICE_DOMAIN: 'mailyard.bench', LOG_LEVEL: 'warn', NODE_ENV: 'production' };
}

/** The harness's own context on `env` (error logs only); migrate as the services first (services.ts). */
export function openHarnessContext(env: Record<string, string>): Promise<ServiceContext> {
  return openContext(configFrom({ ...env, LOG_LEVEL: 'error' }), createLogger('bench', 'error'));
}

/** The gateway on `port` with `key` as the bootstrap key of an enterprise tenant, rate limit out of reach. */
export function bootstrapGatewayEnv(key: string, port: number): Record<string, string> {
  return {
    PORT: String(port),
    BOOTSTRAP_API_KEY: key,
    BOOTSTRAP_TIER: 'enterprise',
    RATE_LIMIT_ENTERPRISE: '1000000000',
  };
}

/** The tenant the gateway bootstrapped for `key` (once the gateway has started). */
export async function bootstrapTenantId(ctx: ServiceContext, key: string): Promise<string> {
  const owner = await findKeyOwner(ctx.db, key);
  if (!owner) throw new Error('bootstrap tenant not found');
  return owner.tenantId;
}
