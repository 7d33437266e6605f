import { type Config, integer, parseSettings, positiveInt, secondsList } from '@mailyard/platform';
import { z } from 'zod';

/** The webhook dispatcher's configuration, derived from the environment (docs/webhooks.md). */
export interface DispatcherSettings {
  /** Events per account in one EMAIL_EVENT delivery (WEBHOOK_BATCH_MAX). */
  batchMax: number;
  /** How long the first event of an account's batch waits for more (WEBHOOK_BATCH_WAIT_MS). */
  batchWaitMs: number;
  /** Seconds before retry n (WEBHOOK_RETRY_DELAYS); when used up, the delivery is dropped. */
  retryDelaysS: number[];
  /** Whole-request timeout of one attempt (WEBHOOK_TIMEOUT_MS, 5 s). */
  timeoutMs: number;
  /** Attempts in flight per webhook (WEBHOOK_ENDPOINT_CONCURRENCY). */
  endpointConcurrency: number;
  /** Attempts in flight per dispatcher process (WEBHOOK_CONCURRENCY). */
  concurrency: number;
  /** How often due retries are looked for (WEBHOOK_POLL_MS). */
  pollMs: number;
  /** A claimed attempt is someone else's to retry after this long (crash of this dispatcher). */
  leaseMs: number;
  /** http:// and private/loopback targets allowed (WEBHOOK_ALLOW_INSECURE). */
  allowInsecure: boolean;
  /**
   * Bus messages in flight. An account's batch fills only while its events are among them, so
   * with batches that do not fill the rate is at most prefetch per WEBHOOK_BATCH_WAIT_MS: 20
   * batches' worth (2,000 at the defaults, ~10,000 events/s), at least 256 (one store groups them).
   */
  prefetch: number;
}

/** The dispatcher's own variables (docs/webhooks.md); WEBHOOK_ALLOW_INSECURE is core (shared with the gateway). */
export const DispatcherEnvSchema = z.object({
  WEBHOOK_TIMEOUT_MS: positiveInt(5000),
  /** Seconds between attempts; the last attempt is made when they are used up (default ~24 h). */
  WEBHOOK_RETRY_DELAYS: secondsList('5,30,120,600,1800,3600,7200,14400,28800,30000'),
  WEBHOOK_BATCH_MAX: positiveInt(100),
  WEBHOOK_BATCH_WAIT_MS: integer('must be a non-negative integer', 0).default(200),
  WEBHOOK_ENDPOINT_CONCURRENCY: positiveInt(4),
  WEBHOOK_CONCURRENCY: positiveInt(256),
  WEBHOOK_POLL_MS: positiveInt(1000),
});

/** Parses the dispatcher's variables from `config.env`; a bad value throws one ConfigError line. */
export function dispatcherSettings(config: Config): DispatcherSettings {
  const env = parseSettings(DispatcherEnvSchema, config.env);
  return {
    batchMax: env.WEBHOOK_BATCH_MAX,
    batchWaitMs: env.WEBHOOK_BATCH_WAIT_MS,
    retryDelaysS: env.WEBHOOK_RETRY_DELAYS,
    timeoutMs: env.WEBHOOK_TIMEOUT_MS,
    endpointConcurrency: env.WEBHOOK_ENDPOINT_CONCURRENCY,
    concurrency: env.WEBHOOK_CONCURRENCY,
    pollMs: env.WEBHOOK_POLL_MS,
    leaseMs: 2 * env.WEBHOOK_TIMEOUT_MS + 5_000,
    allowInsecure: config.WEBHOOK_ALLOW_INSECURE,
    prefetch: Math.max(256, Math.min(env.WEBHOOK_BATCH_MAX * 20, 2000)),
  };
}
