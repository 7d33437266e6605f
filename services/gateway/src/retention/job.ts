/**
 * The retention sweeper as a scheduled job (libs/platform ScheduledJob): every
 * RETENTION_SWEEP_INTERVAL (plus jitter) one replica of the gateway, the holder of the kv lease
 * `retention:sweep`, runs a sweep (sweep.ts); the others skip that pass. The lease is renewed while
 * a sweep runs and lapses by itself when its holder dies; a sweep whose lease was lost stops at the
 * next batch. The first pass comes a minute after start (or after the interval, when shorter), so a
 * gateway restarted more often than the interval still sweeps. The gateway owns it because every
 * deployment runs one (the all-in-one embedded process included) and it already runs the
 * platform's other periodic job (domain checks).
 */
import { type Db, type Kv, type Logger, ScheduledJob } from '@mailyard/platform';
import type { RetentionSettings } from './settings';
import { type SweepOptions, sweepExpired } from './sweep';

export const RETENTION_LEASE_KEY = 'retention:sweep';
const FIRST_PASS_MS = 60_000;

export interface RetentionJobDeps {
  db: Db;
  kv: Kv;
  logger: Logger;
  config: RetentionSettings;
  /** Batch size, pause, onBatch of each sweep (tests, the benchmark); the defaults of sweep.ts otherwise. */
  sweep?: Pick<SweepOptions, 'batchSize' | 'pauseMs' | 'duty' | 'onBatch'>;
}

export function retentionJob(deps: RetentionJobDeps): ScheduledJob {
  const { config } = deps;
  return new ScheduledJob({
    name: 'retention sweep',
    lockKey: RETENTION_LEASE_KEY,
    intervalMs: config.RETENTION_SWEEP_INTERVAL,
    firstDelayMs: Math.min(FIRST_PASS_MS, config.RETENTION_SWEEP_INTERVAL),
    // The lease outlives a stalled holder by at most 5 minutes; a live one renews it every third.
    lockTtlMs: 300_000,
    kv: deps.kv,
    logger: deps.logger,
    run: async (signal) => {
      await sweepExpired({ ...deps.sweep, db: deps.db, logger: deps.logger, signal, durations: config });
    },
  });
}
