/**
 * The one retry schedule of the tree: every caller that waits before trying again (the AMQP bus's
 * reconnects and consumer re-attach, the outbox relay, startup dependency checks, the provider API
 * clients, the backfill worker and the live sync) computes its wait here, so "exponential, capped,
 * optionally jittered" means the same thing everywhere. Pure (the random source is injectable),
 * unit-tested beside it and mutation-tested (docs/testing.md). Only the published client
 * (libs/client/src/http.ts) spells the same capped doubling itself: it ships with no runtime
 * dependencies.
 */
export interface Backoff {
  minMs: number;
  maxMs: number;
  /** Bounds the exponent, so the delay stays finite (and not NaN when `minMs` is 0). */
  maxDoublings: number;
}

/** The longest wait of the backfill worker and of the live sync between two tries of a mailbox. */
export const MAILBOX_RETRY_MAX_MS = 300_000;

/** `minMs` doubled once per earlier attempt (`attempt` counts from 0), capped at `maxMs`. */
export function backoffMs(attempt: number, { minMs, maxMs, maxDoublings }: Backoff): number {
  return Math.min(maxMs, minMs * 2 ** Math.min(attempt, maxDoublings));
}

/** A random delay between half of `ms` and `ms`: clients that failed together retry apart. */
export function jittered(ms: number, random: () => number = Math.random): number {
  return Math.round(jitteredExact(ms, random));
}

/** `jittered` before rounding, for a caller that compares the wait with a limit first. */
export function jitteredExact(ms: number, random: () => number = Math.random): number {
  return ms * (0.5 + random() / 2);
}

/**
 * The wait before the next try of a remote party that may name its own (Retry-After): the
 * back-off, raised to what the party asked for.
 */
export function backoffOrAsked(
  attempt: number,
  backoff: Backoff,
  askedMs: number | null | undefined,
): number {
  return Math.max(backoffMs(attempt, backoff), askedMs ?? 0);
}
