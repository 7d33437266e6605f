import { resolve } from 'node:path';
import { openBus } from '../bus';
import type { Bus } from '../bus/types';
import type { Config } from '../config/env';
import { type Db, migrate, openDatabase } from '../db';
import type { ReadinessCheck } from '../http/health';
import { openKv } from '../kv';
import type { Kv } from '../kv/types';
import type { Logger } from '../logger/logger';
import { redactUrl } from '../logger/redact';
import type { Sealer } from '../secrets/sealer';
import { resolveSealer, verifySealer } from '../secrets/secret-key';

/** Everything a service needs from the platform; one per process, shared by co-hosted services. */
export interface ServiceContext {
  config: Config;
  logger: Logger;
  db: Db;
  bus: Bus;
  kv: Kv;
  /** Seals secrets at rest (SECRET_KEY). */
  sealer: Sealer;
}

/** A started service, as its `start(ctx)` returns it. */
export interface RunningService {
  name: string;
  /** Lines for the startup banner (listening URLs and such). */
  banner: string[];
  /** Printed verbatim after the banner (no prefix, so commands in it can be copied as they are). */
  notice?: string;
  readiness?: Record<string, ReadinessCheck>;
  stop(): Promise<void>;
}

/**
 * The one shape of every service's exported `start`: the process's context in, the running
 * service out. Its own settings come from `ctx.config` (a test that wants other values gives it a
 * context whose config has them); runProcess, scripts/start.ts and the tests call it alike.
 */
export type StartService = (ctx: ServiceContext) => Promise<RunningService>;

export function describeStores(config: Config): string[] {
  return [
    `database: ${config.DATABASE_URL ? `PostgreSQL ${redactUrl(config.DATABASE_URL)}` : `PGlite (embedded) in ${resolve(config.DATA_DIR, 'pg')}`}`,
    `bus:      ${config.AMQP_URL ? `RabbitMQ ${redactUrl(config.AMQP_URL)}` : 'in-process'}`,
    `kv:       ${config.REDIS_URL ? `Redis ${redactUrl(config.REDIS_URL)}` : 'in-process'}`,
  ];
}

/** Opens database (applying migrations), bus and kv per the config. */
export async function openContext(config: Config, logger: Logger): Promise<ServiceContext> {
  const sealer = resolveSealer(config);
  const db = await openDatabase(config);
  const applied = await migrate(db);
  if (applied.length) logger.info('migrations applied', { versions: applied });
  await verifySealer(db, sealer).catch(async (err) => {
    await db.close();
    throw err;
  });
  const bus = await openBus(config, logger);
  const kv = await openKv(config);
  await waitFor(() => kv.check(), 5000).catch((err) =>
    logger.warn('kv not reachable at start; rate limits fail open until it is', {
      error: (err as Error).message,
    }),
  );
  return { config, logger, db, bus, kv, sealer };
}

export async function closeContext(ctx: ServiceContext): Promise<void> {
  await Promise.allSettled([ctx.bus.close(), ctx.kv.close()]);
  await ctx.db.close();
}

export function storeReadiness(ctx: ServiceContext): Record<string, ReadinessCheck> {
  return { db: () => ctx.db.check(), bus: () => ctx.bus.check(), kv: () => ctx.kv.check() };
}

async function waitFor(fn: () => Promise<void>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
