/**
 * How long a copy waits before its next attempt (the retry the consumer publishes delayed):
 *
 * - the schedule's delay (SEND_RETRY_DELAYS, settings.ts retryDelayMs), or
 * - the provider's Retry-After when that is longer (Gmail API / Graph throttling, 429/503; a
 *   busy token endpoint): retrying earlier would only be refused again and spend an attempt.
 *
 * A Retry-After is rounded UP to a step of a fixed ladder (1 s ... 24 h, at most 24 h): the bus
 * keeps one delay queue per distinct delay (RabbitMQ per-delay TTL queues), so provider-chosen
 * values must not create a queue each. Rounding up never retries before the provider asked.
 */

/** The delays (seconds) a Retry-After is rounded up to; the last is the cap. */
export const RETRY_AFTER_STEPS_S: readonly number[] = Object.freeze([
  1, 2, 3, 5, 10, 15, 20, 30, 45, 60, 90, 120, 180, 300, 600, 900, 1200, 1800, 2700, 3600, 7200, 10_800,
  14_400, 21_600, 28_800, 43_200, 86_400,
]);

/** The RETRY_AFTER_STEPS_S step a Retry-After is rounded up to, in milliseconds (at most 24 h). */
function stepMs(retryAfterMs: number): number {
  const cap = RETRY_AFTER_STEPS_S[RETRY_AFTER_STEPS_S.length - 1]!;
  return (RETRY_AFTER_STEPS_S.find((x) => x * 1000 >= retryAfterMs) ?? cap) * 1000;
}

/**
 * Delay before the next attempt, in milliseconds: `scheduledMs` (settings.ts retryDelayMs), or
 * the provider's Retry-After rounded up to a step when that is longer (see the file comment).
 */
export function withRetryAfter(scheduledMs: number, retryAfterMs?: number | null): number {
  if (retryAfterMs === undefined || retryAfterMs === null || !(retryAfterMs > scheduledMs))
    return scheduledMs;
  return Math.max(scheduledMs, stepMs(retryAfterMs));
}
