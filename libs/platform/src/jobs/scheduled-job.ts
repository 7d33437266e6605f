/**
 * A periodic job any replica may run, one replica per pass: every `intervalMs` (plus up to
 * `jitterMs` random delay, so replicas started together do not all wake at once) the job takes
 * the kv lock `lockKey` with an owner token and a TTL, runs one pass, and releases the lock. A
 * replica that finds the lock held skips that pass. While a long pass runs, the lock is extended
 * every TTL/3 (the one renew loop, lease/lease.ts) so it does not expire under it; a replica that crashes mid-pass loses the lock
 * after the TTL and another takes over. stop() stops scheduling and waits for a running pass.
 *
 * Used by the gateway's DNS re-check of sending domains and retention sweep; the IMAP watcher reuses it.
 */
import type { Kv } from '../kv/types';
import { acquireKvLease } from '../lease/kv-lease';
import { type Lease, keepLeaseAlive } from '../lease/lease';
import type { Logger } from '../logger/logger';

export interface ScheduledJobOptions {
  /** Name for logs, e.g. "domain-checks". */
  name: string;
  /** kv key of the lock (the kv adds its own prefix). */
  lockKey: string;
  intervalMs: number;
  /**
   * The first wait after start() (default intervalMs): a job with a long interval (the retention
   * sweep's hour) runs its first pass soon after a start, so restarts more frequent than the
   * interval do not keep postponing it.
   */
  firstDelayMs?: number;
  /** Random extra delay of each wait, 0..jitterMs (default 10% of the interval). */
  jitterMs?: number;
  /** Lock lifetime; extended every lockTtlMs/3 while a pass runs (default max(5 intervals, 5 min)). */
  lockTtlMs?: number;
  kv: Kv;
  logger: Logger;
  /**
   * One pass; its signal aborts when the lock was lost (another replica may be running) or stop()
   * was called.
   */
  run: (signal: AbortSignal) => Promise<void>;
}

/** What one scheduled tick did. */
export type PassOutcome = 'ran' | 'skipped' | 'failed';

const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

export class ScheduledJob {
  private timer: NodeJS.Timeout | null = null;
  private current: Promise<PassOutcome> | null = null;
  /** Aborts the signal of the pass in progress (stop()). */
  private abortPass: (() => void) | null = null;
  private stopped = true;
  private readonly jitterMs: number;
  private readonly lockTtlMs: number;

  constructor(private readonly o: ScheduledJobOptions) {
    this.jitterMs = o.jitterMs ?? Math.round(o.intervalMs / 10);
    this.lockTtlMs = o.lockTtlMs ?? Math.max(o.intervalMs * 5, 300_000);
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule(this.o.firstDelayMs ?? this.o.intervalMs);
  }

  /**
   * Stops scheduling, aborts the signal of a pass in progress (a pass that watches it stops early)
   * and waits for that pass (which then releases its lock).
   */
  async stop(): Promise<void> {
    this.stopped = true;
    this.abortPass?.();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.current;
  }

  /**
   * One guarded pass now: `skipped` when another holder has the lock (or the kv cannot be
   * reached), `failed` when the pass threw (logged), else `ran`. Never throws. Passes of one
   * instance never overlap: a call while a pass runs waits for it and reports `skipped`.
   */
  async runOnce(): Promise<PassOutcome> {
    if (this.current) {
      await this.current;
      return 'skipped';
    }
    this.current = this.pass().finally(() => {
      this.current = null;
    });
    return this.current;
  }

  private schedule(waitMs = this.o.intervalMs): void {
    if (this.stopped) return;
    const delay = waitMs + Math.floor(Math.random() * (this.jitterMs + 1));
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.runOnce().finally(() => this.schedule());
    }, delay);
    this.timer.unref();
  }

  private async pass(): Promise<PassOutcome> {
    const { kv, logger, lockKey, name } = this.o;
    let lease: Lease | null;
    try {
      lease = await acquireKvLease(kv, lockKey, this.lockTtlMs);
    } catch (err) {
      logger.warn(`${name}: kv unavailable; pass skipped`, { error: message(err) });
      return 'skipped';
    }
    if (!lease) return 'skipped';
    const lost = new AbortController();
    this.abortPass = () => lost.abort();
    const stopRenewing = keepLeaseAlive(lease, {
      onLost: () => {
        if (lost.signal.aborted) return;
        logger.warn(`${name}: lock lost during a pass`);
        lost.abort();
      },
      onError: (err) => logger.warn(`${name}: could not extend the lock`, { error: message(err) }),
    });
    try {
      await this.o.run(lost.signal);
      return 'ran';
    } catch (err) {
      logger.warn(`${name}: pass failed`, { error: message(err) });
      return 'failed';
    } finally {
      this.abortPass = null;
      stopRenewing();
      await lease.release().catch(() => {});
    }
  }
}
