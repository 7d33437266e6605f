/**
 * The release of scheduled sends (docs/operations.md "Scheduled sends"): due sends held in
 * `scheduled_sends` are moved into the outbox, their log rows SCHEDULED -> QUEUED, by one
 * statement (libs/store scheduled-sends.ts releaseDue); then the outbox relay publishes them like
 * any send's commands.
 *
 * Why a leased mover and not an `available_at` on the outbox rows: the relay walks the outbox by
 * primary key (0025: no other index is written per row), so rows waiting for days in front of it
 * would be passed over on every poll of every relay and slow immediate sends; a cancel must find
 * and remove one send's rows, and its log rows must leave SCHEDULED exactly when its commands are
 * handed over. A table of its own keeps the relay's query and latency for immediate sends as they
 * are, and makes release and cancel two transactions that take the same row lock first: one
 * wins, never both (scheduled-sends.ts).
 *
 * One replica releases: every send service runs this loop, and the one holding the kv lease
 * `scheduled-sends:release` (libs/platform lease, renewed by keepLeaseAlive) does the work; the
 * others look for the lease every `pollMs`. A holder that dies loses the lease after LEASE_MS
 * and another takes over; while the kv store cannot be reached, every replica releases. Correctness
 * does not depend on the lease: releaseDue skips rows
 * another transaction holds (FOR UPDATE SKIP LOCKED) and a release commits whole or not at all,
 * so a crash at any moment leaves a send held or released, never lost. The holder sleeps until
 * the next due time by the database's clock, at most `pollMs` (sends held by another gateway
 * since its last look are seen at the latest then).
 */
import {
  type Db,
  type Kv,
  type Lease,
  type Logger,
  acquireKvLease,
  counter,
  keepLeaseAlive,
} from '@mailyard/platform';
import { scheduledSends } from '@mailyard/store';

export const RELEASE_LEASE_KEY = 'scheduled-sends:release';
/** How long the lease lasts unrenewed: how long a dead holder delays releases at most. */
export const LEASE_MS = 15_000;
/** Longest sleep between looks (new held sends, the lease of a dead holder). */
export const RELEASE_POLL_MS = 1_000;
/** Sends released per statement. */
const BATCH = 200;
/** Wait after a look that found due sends it could not take (held by a cancel), or a failure. */
const RETRY_MS = 200;

const releasedTotal = counter('mailyard_scheduled_sends_released_total', 'Scheduled sends released');

export interface ScheduledReleaseOptions {
  db: Db;
  kv: Kv;
  logger: Logger;
  /** Called after released commands were committed to the outbox (wakes the relay). */
  afterRelease: () => void;
  pollMs?: number;
}

export interface ScheduledRelease {
  stop(): Promise<void>;
}

export function startScheduledRelease(o: ScheduledReleaseOptions): ScheduledRelease {
  const pollMs = o.pollMs ?? RELEASE_POLL_MS;
  let running = true;
  let lease: Lease | null = null;
  let stopRenewing: (() => void) | null = null;
  let wake: (() => void) | null = null;
  let warnedKv = false;

  const dropLease = () => {
    stopRenewing?.();
    stopRenewing = null;
    lease = null;
  };

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        wake = null;
        resolve();
      }
      wake = done;
    });

  /** One look; returns how long to wait before the next. */
  async function look(): Promise<number> {
    if (!lease) {
      let kvDown = false;
      lease = await acquireKvLease(o.kv, RELEASE_LEASE_KEY, LEASE_MS).catch((err: unknown) => {
        kvDown = true;
        if (!warnedKv)
          o.logger.warn('scheduled send release: kv unreachable, releasing without the lease', {
            error: err instanceof Error ? err.message : String(err),
          });
        warnedKv = true;
        return null;
      });
      if (!kvDown) warnedKv = false;
      // Without the kv, every replica releases: still each send once (releaseDue's row locks).
      if (!lease && !kvDown) return pollMs;
    }
    if (lease && !stopRenewing) {
      const held: Lease = lease;
      stopRenewing = keepLeaseAlive(held, {
        floorMs: 100,
        onLost: () => {
          if (lease === held) dropLease();
          o.logger.warn('scheduled send release: lease lost');
        },
      });
    }
    const released = await scheduledSends.releaseDue(o.db, BATCH);
    if (released > 0) {
      releasedTotal.inc(released);
      o.afterRelease();
      o.logger.debug('scheduled sends released', { sends: released });
      if (released >= BATCH) return 0;
    }
    const next = await scheduledSends.msUntilNextDue(o.db);
    if (next === null) return pollMs;
    return next === 0 ? RETRY_MS : Math.min(next, pollMs);
  }

  const loop = (async () => {
    while (running) {
      let wait: number;
      try {
        wait = await look();
      } catch (err) {
        o.logger.warn('scheduled send release failed; trying again', {
          error: err instanceof Error ? err.message : String(err),
        });
        wait = pollMs;
      }
      if (running && wait > 0) await sleep(wait);
    }
  })();

  return {
    async stop() {
      running = false;
      wake?.();
      await loop;
      const held = lease;
      dropLease();
      await held?.release().catch(() => false);
    },
  };
}
