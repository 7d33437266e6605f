import type { Config } from '@mailyard/platform';

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
  /** Bus messages in flight: enough to fill batches. */
  prefetch: number;
}

export function dispatcherSettings(config: Config): DispatcherSettings {
  return {
    batchMax: config.WEBHOOK_BATCH_MAX,
    batchWaitMs: config.WEBHOOK_BATCH_WAIT_MS,
    retryDelaysS: config.WEBHOOK_RETRY_DELAYS,
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    endpointConcurrency: config.WEBHOOK_ENDPOINT_CONCURRENCY,
    concurrency: config.WEBHOOK_CONCURRENCY,
    pollMs: config.WEBHOOK_POLL_MS,
    leaseMs: 2 * config.WEBHOOK_TIMEOUT_MS + 5_000,
    allowInsecure: config.WEBHOOK_ALLOW_INSECURE,
    prefetch: Math.max(64, Math.min(config.WEBHOOK_BATCH_MAX * 4, 2000)),
  };
}
