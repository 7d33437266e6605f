/** Retry delays shared by the AMQP bus (reconnects, consumer re-attach) and the outbox relay. */
export interface Backoff {
  minMs: number;
  maxMs: number;
  /** Bounds the exponent, so the delay stays finite (and not NaN when `minMs` is 0). */
  maxDoublings: number;
}

/** `minMs` doubled once per earlier attempt, capped at `maxMs`. */
export function backoffMs(attempt: number, { minMs, maxMs, maxDoublings }: Backoff): number {
  return Math.min(maxMs, minMs * 2 ** Math.min(attempt, maxDoublings));
}

/** A random delay between half of `ms` and `ms`: clients that failed together retry apart. */
export function jittered(ms: number): number {
  return Math.round(ms / 2 + (Math.random() * ms) / 2);
}
