import { openBus } from '../bus';
import { errorMessage } from '../bus/delivery';
import { type Config, ConfigError } from '../config/env';
import { migrate, openDatabase } from '../db';
import type { ReadinessCheck } from '../http/health';
import { openKv } from '../kv';
import type { Logger } from '../logger/logger';
/**
 * Start-up that waits for its dependencies instead of hanging or exiting. A process started
 * while PostgreSQL, RabbitMQ or Redis is down (or restarting) retries each step with capped,
 * jittered back-off, logs every failed try with its reason (and a try that takes long, e.g. a
 * migration waiting for another replica's lock), and exposes what it is waiting for so /readyz
 * can answer 503 with it. Only a configuration error (ConfigError: bad SECRET_KEY and such) ends
 * the wait: retrying cannot fix it.
 */
import { backoffMs, jittered } from '../retry/backoff';
import { resolveSealer, verifySealer } from '../secrets/secret-key';
import type { ServiceContext } from './context';

/** 500 ms doubling up to 15 s between tries of one step. */
const RETRY = { minMs: 500, maxMs: 15_000, maxDoublings: 5 };
/** A try still running after this long is logged (and again every period). */
const SLOW_TRY_MS = 10_000;
/** How long the first kv check may take before start-up goes on without it (fail open). */
const KV_FIRST_CHECK_MS = 5_000;

export type StoreName = 'db' | 'bus' | 'kv';

/** What start-up waits for, for /readyz while starting. */
export class StartupState {
  private readonly waiting = new Map<string, string>();
  private readonly done = new Set<string>();

  waitingFor(step: string, reason: string): void {
    this.done.delete(step);
    this.waiting.set(step, reason);
  }

  completed(step: string): void {
    this.waiting.delete(step);
    this.done.add(step);
  }

  /** Readiness checks that fail until each store is opened, with the last reason. */
  readiness(steps: string[]): Record<string, ReadinessCheck> {
    return Object.fromEntries(
      steps.map((step) => [
        step,
        async () => {
          if (this.done.has(step)) return;
          throw new Error(`starting: ${this.waiting.get(step) ?? 'waiting'}`);
        },
      ]),
    );
  }
}

export interface RetryOptions {
  logger: Logger;
  state: StartupState;
  /** Stops retrying (SIGTERM while starting). */
  cancelled: () => boolean;
}

export class StartupCancelled extends Error {
  override name = 'StartupCancelled';
}

/** Runs `fn` until it resolves; ConfigError and cancellation end the wait by throwing. */
export async function retryUntilReady<T>(
  step: string,
  what: string,
  fn: () => Promise<T>,
  { logger, state, cancelled }: RetryOptions,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    if (cancelled()) throw new StartupCancelled(`start-up cancelled while waiting for ${what}`);
    const startedAt = Date.now();
    const slow = setInterval(() => {
      logger.warn(`still waiting for ${what}`, { step, attempt, waited_ms: Date.now() - startedAt });
    }, SLOW_TRY_MS);
    try {
      const value = await fn();
      state.completed(step);
      if (attempt > 1) logger.info(`${what} available; start-up continues`, { step, attempts: attempt });
      return value;
    } catch (err) {
      if (err instanceof ConfigError) throw err;
      const reason = errorMessage(err);
      state.waitingFor(step, reason);
      const wait = jittered(backoffMs(attempt - 1, RETRY));
      logger.warn(`${what} not available; retrying`, { step, attempt, retry_in_ms: wait, error: reason });
      await sleepUnless(wait, cancelled);
    } finally {
      clearInterval(slow);
    }
  }
}

async function sleepUnless(ms: number, cancelled: () => boolean): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until && !cancelled()) {
    await new Promise((r) => setTimeout(r, Math.min(100, until - Date.now())));
  }
}

/**
 * openContext that waits: database (migrations applied, SECRET_KEY checked against the stored
 * secrets), then the bus, then the kv (which fails open: rate limits are skipped until it answers).
 */
export async function openContextWhenReady(
  config: Config,
  logger: Logger,
  opts: RetryOptions,
): Promise<ServiceContext> {
  const sealer = resolveSealer(config);
  // Opening is lazy for PostgreSQL (PGlite opens its files); the migrations connect.
  const db = await retryUntilReady('db:open', 'the database', () => openDatabase(config), opts);
  try {
    await retryUntilReady(
      'db',
      'the database',
      async () => {
        const applied = await migrate(db);
        if (applied.length) logger.info('migrations applied', { versions: applied });
        await verifySealer(db, sealer);
      },
      opts,
    );
    const bus = await retryUntilReady('bus', 'the bus', () => openBus(config, logger), opts);
    const kv = await openKv(config);
    await waitForKv(kv, logger);
    opts.state.completed('kv');
    return { config, logger, db, bus, kv, sealer };
  } catch (err) {
    await db.close().catch(() => {});
    throw err;
  }
}

async function waitForKv(kv: ServiceContext['kv'], logger: Logger): Promise<void> {
  const deadline = Date.now() + KV_FIRST_CHECK_MS;
  for (;;) {
    try {
      return await kv.check();
    } catch (err) {
      if (Date.now() > deadline) {
        logger.warn('kv not reachable at start; rate limits fail open until it is', {
          error: errorMessage(err),
        });
        return;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
