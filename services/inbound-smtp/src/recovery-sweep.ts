/**
 * Crash recovery of the in-process path: the MX processes each message it stored right after
 * storing it (index.ts), so a message is left `stored` only when that work did not finish (the
 * process died after the 250, or processing failed). Every `intervalMs` this sweep takes the
 * messages still `stored` after `leaseMs` (longer than processing takes, so it does not race a
 * live process's own work in the normal case) and processes them through the loading path.
 * Racing is safe anyway: the final statement of process-message.ts marks a message processed
 * and writes its deliveries only if it was still `stored`, so a message is handed to the
 * dispatcher once however many processes (replicas, this sweep, an old bus announcement) work on
 * it; the cost of a race is CPU, never a second post. Sweeps do not overlap; a failed sweep is
 * logged and retried at the next interval. A sweep loads and processes PARALLEL messages at a
 * time, so it holds at most PARALLEL raw messages (each up to INBOUND_MAX_MESSAGE_BYTES) however
 * many it found.
 */
import type { Db, Logger } from '@mailyard/platform';
import { inboundMessages } from '@mailyard/store';

/** Messages a sweep has in work at once. */
const PARALLEL = 4;

export interface RecoverySweepOptions {
  leaseMs: number;
  intervalMs: number;
  /** Most messages one sweep takes (the rest in the next sweep). */
  batch?: number;
}

export interface RecoverySweep {
  /** One sweep now; resolves with the number of messages it processed. */
  sweep(): Promise<number>;
  stop(): Promise<void>;
}

export function startRecoverySweep(
  db: Db,
  logger: Logger,
  processOne: (id: string) => Promise<'processed' | 'skipped'>,
  opts: RecoverySweepOptions,
): RecoverySweep {
  let running: Promise<number> | null = null;
  const sweepOnce = async (): Promise<number> => {
    const ids = await inboundMessages.storedBefore(db, opts.leaseMs, opts.batch ?? 100);
    let processed = 0;
    for (let i = 0; i < ids.length; i += PARALLEL) {
      const results = await Promise.all(ids.slice(i, i + PARALLEL).map((id) => processOne(id)));
      processed += results.filter((r) => r === 'processed').length;
    }
    if (ids.length > 0) logger.warn('recovered stored inbound messages', { found: ids.length, processed });
    return processed;
  };
  const sweep = () => {
    running ??= sweepOnce().finally(() => {
      running = null;
    });
    return running;
  };
  const timer = setInterval(() => {
    sweep().catch((err: Error) => logger.error('inbound recovery sweep failed', { error: err.message }));
  }, opts.intervalMs);
  timer.unref();
  return {
    sweep,
    async stop() {
      clearInterval(timer);
      await running?.catch(() => 0);
    },
  };
}
