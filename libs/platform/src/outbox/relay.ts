import { type BusEnvelope, Exchange, type ExchangeName } from '@mailyard/contracts';
import { errorMessage } from '../bus/delivery';
import type { Bus } from '../bus/types';
import type { Db } from '../db/types';
import type { Logger } from '../logger/logger';
import { backoffMs, jittered } from '../retry/backoff';

export interface OutboxRelayOptions {
  /** Idle wait between polls when the outbox is empty. */
  pollMs: number;
  /** Rows taken (and locked) per transaction. */
  batchSize: number;
  /**
   * 0 (default): a row is deleted by the transaction that publishes it. More: published rows are
   * kept that long, marked sent, before cleanup deletes them (for debugging: the mark costs
   * PostgreSQL an update per message, a full new version of the row with its WAL and index entries).
   */
  retentionMs?: number;
  /** How often that cleanup runs (default 60 s). */
  cleanupEveryMs?: number;
  /** Cap of the backoff after failed batches (default 30 s). */
  maxBackoffMs?: number;
}

interface OutboxRow {
  id: number | string;
  exchange: string;
  routing_key: string;
  message: unknown;
}

const EXCHANGES = new Set<string>(Object.values(Exchange));
/** Rows deleted per cleanup statement, so one cleanup never holds a huge delete. */
const CLEANUP_CHUNK = 5_000;

/**
 * Publishes committed outbox rows to the bus, at least once each. Each batch is one
 * transaction: `FOR UPDATE SKIP LOCKED` lets several relays share the table; rows are deleted
 * (or, with a retention, marked sent) only after the broker confirmed them, in the same
 * transaction, so a crash at any point leaves them pending (and they are published again:
 * consumers are idempotent).
 */
export class OutboxRelay {
  private readonly o: Required<OutboxRelayOptions>;
  private running = false;
  private loop: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  private notified = false;
  private failures = 0;
  private lastCleanup = 0;

  constructor(
    private readonly db: Db,
    private readonly bus: Bus,
    private readonly logger: Logger,
    opts: OutboxRelayOptions,
  ) {
    if (!Number.isInteger(opts.batchSize) || opts.batchSize < 1) {
      throw new Error(`OutboxRelay: batchSize must be a positive integer (got ${opts.batchSize})`);
    }
    if (!Number.isFinite(opts.pollMs) || opts.pollMs < 1) {
      throw new Error(`OutboxRelay: pollMs must be at least 1 (got ${opts.pollMs})`);
    }
    if (opts.retentionMs !== undefined && !(opts.retentionMs >= 0)) {
      throw new Error(`OutboxRelay: retentionMs must be 0 or more (got ${opts.retentionMs})`);
    }
    this.o = {
      pollMs: opts.pollMs,
      batchSize: opts.batchSize,
      retentionMs: opts.retentionMs ?? 0,
      cleanupEveryMs: opts.cleanupEveryMs ?? 60_000,
      maxBackoffMs: opts.maxBackoffMs ?? 30_000,
    };
  }

  /** Starts the polling loop (no-op when running). */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** Stops the loop after the batch in progress (its publishes settle first). */
  async stop(): Promise<void> {
    this.running = false;
    this.wake?.();
    await this.loop;
    this.loop = null;
  }

  /** New rows were committed: poll now instead of after pollMs (ignored while backing off). */
  notify(): void {
    this.notified = true;
    this.wake?.();
  }

  /**
   * Publishes one batch of pending rows; returns how many rows it took. Rows the broker
   * confirmed are settled (deleted, or marked sent with a retention) even when others in the
   * batch failed; then it throws, and the failed rows stay pending for the next attempt.
   */
  async drainOnce(): Promise<number> {
    return this.o.retentionMs === 0 ? this.drainDeleting() : this.drainMarking();
  }

  /**
   * Without retention: the batch is taken by one `DELETE ... RETURNING` in a transaction that
   * commits only after every confirm arrived (a crash or a failed publish rolls the rows back,
   * pending again). A partly failed batch is rolled back whole, then its confirmed rows are
   * deleted on their own; a row another relay takes in between is published twice (at least once).
   */
  private async drainDeleting(): Promise<number> {
    let partial: { done: number[]; failed: number; taken: number; error: unknown } | undefined;
    const rollback = new Error('outbox relay: batch partly published');
    try {
      return await this.db.transaction(async (tx) => {
        const { rows } = await tx.query<OutboxRow>(
          // ARRAY(...) runs the locking LIMIT query once (an init plan), then the rows are found
          // by primary key; as `IN (subquery)` the planner may run it once per deleted row.
          `DELETE FROM outbox WHERE id = ANY(ARRAY(
             SELECT id FROM outbox WHERE sent_at IS NULL ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED
           )) RETURNING id, exchange, routing_key, message`,
          [this.o.batchSize],
        );
        rows.sort((a, b) => Number(a.id) - Number(b.id));
        const outcome = await this.publishAll(rows);
        if (outcome.failed > 0) {
          partial = { ...outcome, taken: rows.length };
          throw rollback;
        }
        return rows.length;
      });
    } catch (err) {
      if (err !== rollback || !partial) throw err;
      const { done, failed, taken, error } = partial;
      if (done.length > 0) await this.db.query('DELETE FROM outbox WHERE id = ANY($1::bigint[])', [done]);
      throw new Error(`outbox relay: ${failed} of ${taken} messages not published: ${errorMessage(error)}`);
    }
  }

  /** With retention: rows are locked, published, then marked sent in the same transaction. */
  private async drainMarking(): Promise<number> {
    const outcome = await this.db.transaction(async (tx) => {
      const { rows } = await tx.query<OutboxRow>(
        `SELECT id, exchange, routing_key, message FROM outbox
         WHERE sent_at IS NULL ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED`,
        [this.o.batchSize],
      );
      if (rows.length === 0) return { taken: 0, failed: 0, error: undefined as unknown };
      const { done, failed, error } = await this.publishAll(rows);
      if (done.length > 0)
        await tx.query('UPDATE outbox SET sent_at = now() WHERE id = ANY($1::bigint[])', [done]);
      return { taken: rows.length, failed, error };
    });
    if (outcome.failed > 0) {
      throw new Error(
        `outbox relay: ${outcome.failed} of ${outcome.taken} messages not published: ${errorMessage(outcome.error)}`,
      );
    }
    return outcome.taken;
  }

  /** Publishes `rows` in their order on one channel and awaits their confirms together. */
  private async publishAll(rows: OutboxRow[]): Promise<{ done: number[]; failed: number; error: unknown }> {
    const results = await Promise.allSettled(rows.map((row) => this.publishRow(row)));
    const done: number[] = [];
    let failed = 0;
    let error: unknown;
    results.forEach((r, i) => {
      if (r.status === 'fulfilled') done.push(Number(rows[i]!.id));
      else {
        failed++;
        error ??= r.reason;
      }
    });
    return { done, failed, error };
  }

  /** Deletes rows sent longer than retentionMs ago; returns how many. */
  async cleanup(): Promise<number> {
    let deleted = 0;
    for (;;) {
      const res = await this.db.query(
        `DELETE FROM outbox WHERE id IN (
           SELECT id FROM outbox WHERE sent_at < now() - $1::bigint * interval '1 millisecond' LIMIT $2
         )`,
        [this.o.retentionMs, CLEANUP_CHUNK],
      );
      deleted += res.rowCount;
      if (res.rowCount < CLEANUP_CHUNK) return deleted;
    }
  }

  private async publishRow(row: OutboxRow): Promise<void> {
    const message = row.message;
    if (!EXCHANGES.has(row.exchange) || typeof message !== 'object' || message === null) {
      // Cannot be published, ever; retrying would stall the outbox. Dropped, loudly.
      this.logger.error('outbox row cannot be published; dropped', {
        outbox_id: Number(row.id),
        exchange: row.exchange,
        routing_key: row.routing_key,
      });
      return;
    }
    await this.bus.publish(row.exchange as ExchangeName, row.routing_key, message as BusEnvelope);
  }

  private async run(): Promise<void> {
    this.logger.info('outbox relay started', { batch_size: this.o.batchSize, poll_ms: this.o.pollMs });
    while (this.running) {
      let wait = this.o.pollMs;
      let interruptible = true;
      try {
        const taken = await this.drainOnce();
        if (this.failures > 0) this.logger.info('outbox relay recovered', { after_failures: this.failures });
        this.failures = 0;
        if (taken >= this.o.batchSize) wait = 0; // more rows are likely waiting
      } catch (err) {
        this.failures++;
        wait = this.backoff();
        interruptible = false;
        this.logger.warn('outbox relay batch failed; backing off', {
          failures: this.failures,
          retry_in_ms: wait,
          error: errorMessage(err),
        });
      }
      await this.maybeCleanup();
      if (this.running) await this.sleep(wait, interruptible);
    }
    this.logger.info('outbox relay stopped');
  }

  private async maybeCleanup(): Promise<void> {
    if (Date.now() - this.lastCleanup < this.o.cleanupEveryMs) return;
    this.lastCleanup = Date.now();
    try {
      const deleted = await this.cleanup();
      if (deleted > 0) this.logger.debug('outbox cleanup', { deleted });
    } catch (err) {
      this.logger.warn('outbox cleanup failed', { error: errorMessage(err) });
    }
  }

  private backoff(): number {
    const { pollMs: minMs, maxBackoffMs: maxMs } = this.o;
    return jittered(backoffMs(this.failures, { minMs, maxMs, maxDoublings: 16 }));
  }

  private sleep(ms: number, interruptible: boolean): Promise<void> {
    if (interruptible && this.notified) {
      this.notified = false;
      return new Promise((r) => setImmediate(r));
    }
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wake = null;
        if (interruptible) this.notified = false;
        resolve();
      };
      const timer = setTimeout(done, ms);
      // stop() always wakes; notify() only when not backing off.
      this.wake = () => {
        if (interruptible || !this.running) done();
      };
    });
  }
}
