/**
 * The one lease of the tree: a claim on shared work (a backfill job row, a kv lock: a mailer's live
 * sync, a scheduled job's pass, an OAuth token refresh) that lasts `ttlMs` unless renewed, so a
 * holder that dies loses it by itself and another takes over. Both storages implement the same
 * three steps: acquire (acquireKvLease in kv-lease.ts; a claim of the store, e.g. libs/store backfillJobs.claim
 * then backfillJobs.lease), renew (only while still the holder) and release (only while still
 * the holder). `keepLeaseAlive` is the one renew loop: every third of the lease's length, so
 * two renewals can fail before it runs out.
 */
export interface Lease {
  /** How long the lease lasts from its last renewal. */
  readonly ttlMs: number;
  /** Extends the lease by `ttlMs`; false when it is no longer ours (expired and taken, or ended). */
  renew(): Promise<boolean>;
  /** Gives the lease back; false when it was no longer ours. */
  release(): Promise<boolean>;
}

export interface KeepAliveOptions {
  /** The shortest period between renewals, whatever the lease's length (default 1 ms). */
  floorMs?: number;
  /** A renewal found the lease taken or ended. */
  onLost?: () => void;
  /** A renewal failed (the storage could not be reached); the lease may still be ours. */
  onError?: (err: unknown) => void;
}

/** The period of the renew loop: a third of the lease's length, at least `floorMs`. */
export function renewEveryMs(ttlMs: number, floorMs = 1): number {
  return Math.max(floorMs, Math.floor(ttlMs / 3));
}

/**
 * Renews `lease` every third of its length until the returned stop function is called. The timer
 * never keeps the process alive by itself.
 */
export function keepLeaseAlive(lease: Lease, o: KeepAliveOptions = {}): () => void {
  const timer = setInterval(
    () =>
      void lease.renew().then(
        (held) => {
          if (!held) o.onLost?.();
        },
        (err) => o.onError?.(err),
      ),
    renewEveryMs(lease.ttlMs, o.floorMs),
  );
  timer.unref();
  return () => clearInterval(timer);
}
