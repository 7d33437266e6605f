/**
 * One retention sweep (docs/operations.md "Retention"): for each rule of libs/store RETENTION_RULES,
 * in order, removes the rows older than now minus the rule's duration, in batches of `batchSize`
 * (one bounded statement each, libs/store removeExpiredBatch), pausing between batches so the
 * statements of sends, events and the dispatcher run between them (on PGlite, one connection, they
 * queue behind each batch): at least `pauseMs`, and long enough that the sweep's statements take at
 * most `duty` of the time (a batch of 60 ms at duty 0.2 is followed by 240 ms of nothing). The sweep
 * thus never takes more than a fifth of one database backend's time, however busy the database is
 * (its batches slow down with the load, and so do their pauses): on the 2-core machine of
 * bench/retention, at full duty the sweep cost the send pipeline a third of its deliveries per second. Stops between batches when `signal` aborts (the lease was lost, the
 * process stops): what is left is expired and the next sweep removes it.
 *
 * `now` is a parameter (tests pass their own clock): the cutoff of each rule is fixed at the start of
 * the sweep, so a row that expires while the sweep runs waits for the next one.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { type Db, type Logger, counter, gauge, histogram } from '@mailyard/platform';
import {
  RETENTION_RULES,
  type RetentionRule,
  type RetentionSetting,
  removeExpiredBatch,
} from '@mailyard/store';

const removedRows = counter(
  'mailyard_retention_rows_removed_total',
  'Rows the retention sweep removed, per table (cascaded rows not counted)',
  ['table'],
);
const sweepSeconds = histogram(
  'mailyard_retention_sweep_duration_seconds',
  'Duration of retention sweeps',
  [],
  [0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600],
);
const lastSweep = gauge(
  'mailyard_retention_last_sweep_timestamp_seconds',
  'When the last retention sweep of this process ended (Unix time)',
);

export interface SweepOptions {
  db: Db;
  logger: Logger;
  /** Milliseconds each setting keeps a row. */
  durations: Record<RetentionSetting, number>;
  now?: Date;
  rules?: readonly RetentionRule[];
  /** Rows per statement (default 250). */
  batchSize?: number;
  /** Shortest pause between two statements (default 20 ms). */
  pauseMs?: number;
  /** Largest share of the time the sweep's statements may take, 0 < duty <= 1 (default 0.2). */
  duty?: number;
  signal?: AbortSignal;
  /** Called after each batch, before the pause (tests, the benchmark). */
  onBatch?: (table: string, removed: number) => void | Promise<void>;
}

export interface SweepReport {
  /** Rows removed per table. */
  removed: Record<string, number>;
  batches: number;
  ms: number;
  /** True when the signal stopped the sweep before it was done. */
  interrupted: boolean;
}

export const SWEEP_BATCH = 250;
export const SWEEP_PAUSE_MS = 20;
export const SWEEP_DUTY = 0.2;

export async function sweepExpired(o: SweepOptions): Promise<SweepReport> {
  const started = performance.now();
  const now = (o.now ?? new Date()).getTime();
  const batchSize = o.batchSize ?? SWEEP_BATCH;
  const pauseMs = o.pauseMs ?? SWEEP_PAUSE_MS;
  const duty = Math.min(1, Math.max(0.01, o.duty ?? SWEEP_DUTY));
  const report: SweepReport = { removed: {}, batches: 0, ms: 0, interrupted: false };
  sweep: for (const rule of o.rules ?? RETENTION_RULES) {
    const cutoff = new Date(now - o.durations[rule.setting]);
    report.removed[rule.table] ??= 0;
    let removed = report.removed[rule.table] ?? 0;
    let after: string | null = null;
    for (;;) {
      if (o.signal?.aborted) {
        report.interrupted = true;
        break sweep;
      }
      const t0 = performance.now();
      const batch = await removeExpiredBatch(o.db, rule, cutoff, after, batchSize);
      const tookMs = performance.now() - t0;
      report.batches++;
      removed += batch.removed;
      report.removed[rule.table] = removed;
      if (batch.removed > 0) removedRows.inc({ table: rule.table }, batch.removed);
      await o.onBatch?.(rule.table, batch.removed);
      if (batch.removed === 0 || batch.last === null) break;
      after = batch.last;
      const restMs = Math.max(pauseMs, (tookMs * (1 - duty)) / duty);
      if (restMs > 0) await delay(Math.round(restMs));
    }
  }
  report.ms = Math.round(performance.now() - started);
  sweepSeconds.observe(report.ms / 1000);
  lastSweep.set(Date.now() / 1000);
  o.logger.info('retention sweep', { ...report });
  return report;
}
