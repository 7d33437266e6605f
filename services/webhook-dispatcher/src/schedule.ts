/**
 * Webhook retry schedule (docs/webhooks.md "Retries and crash safety"): exponential back-off with jitter.
 * `delaysS[n-1]` seconds follow failed attempt n, each scaled by a random factor in
 * [1 - jitter, 1 + jitter) so receivers that failed together are not retried together; when the
 * list is used up the delivery is dropped (null). The default list grows roughly x4-x6 per step
 * and sums to just over 24 h. Pure: the random source is a parameter.
 */
export const JITTER = 0.2;

/** Milliseconds until the attempt after failed attempt `attempt` (1-based), or null: give up. */
export function nextRetryDelayMs(
  attempt: number,
  delaysS: readonly number[],
  random: () => number = Math.random,
): number | null {
  const base = delaysS[attempt - 1];
  if (base === undefined) return null;
  const factor = 1 - JITTER + 2 * JITTER * random();
  return Math.max(0, Math.round(base * 1000 * factor));
}

/** Total seconds the schedule spans without jitter (for docs and the dropped record). */
export function retryWindowS(delaysS: readonly number[]): number {
  return delaysS.reduce((a, b) => a + b, 0);
}

/**
 * The longest a delivery can legitimately wait for an attempt: every delay at its jitter maximum
 * plus every attempt taking the whole timeout. A delivery older than this (the dispatcher was
 * down, or its endpoint kept it waiting) is dropped instead of attempted (docs/webhooks.md
 * "Retries and crash safety": dropped with a record saying so).
 */
export function retryWindowMs(delaysS: readonly number[], timeoutMs: number): number {
  return retryWindowS(delaysS) * 1000 * (1 + JITTER) + (delaysS.length + 1) * timeoutMs;
}
