/**
 * The tracking service's provider-callback worker: claims stored batches one at a time (libs/store
 * provider-callbacks.ts `claim`: FOR UPDATE SKIP LOCKED and a lease, renewed by the platform's one
 * renew loop keepLeaseAlive) and processes each in one transaction (sparkpost-batch.ts) that also
 * marks it processed, then wakes the outbox relay. A batch is looked for when the route stored
 * one (`notify`), at start (batches stored before a restart) and every `pollMs` (batches another
 * process stored). A failed attempt gives the batch back with its error, to be tried again after
 * a back-off (platform retry/backoff.ts); after CALLBACK_MAX_ATTEMPTS claims it is left
 * unprocessed with `last_error` for an operator (docs/providers.md).
 */
import { randomUUID } from 'node:crypto';
import { type Db, type Logger, backoffMs, counter, jittered, keepLeaseAlive } from '@mailyard/platform';
import { type StoredCallbackBatch, providerCallbacks } from '@mailyard/store';
import { type CallbackEventOutcome, processSparkPostBatchIn } from './sparkpost-batch';

export const callbackEvents = counter(
  'mailyard_provider_callback_events_total',
  'Provider callback events by provider and outcome (recorded, unchanged, duplicate, ignored, unknown_send, invalid)',
  ['provider', 'outcome'],
);

/** How long a claimed batch stays ours without renewal. */
export const CALLBACK_LEASE_MS = 60_000;
/** Claims of one batch before it is left for an operator. */
export const CALLBACK_MAX_ATTEMPTS = 10;
/** The wait before a failed batch is tried again: 1 s doubling up to 5 min, jittered. */
const RETRY = { minMs: 1000, maxMs: 300_000, maxDoublings: 9 };

export interface CallbackWorkerOptions {
  db: Db;
  logger: Logger;
  pollMs: number;
  /** Events were committed: wake the outbox relay. */
  afterCommit: () => void;
}

export interface CallbackWorker {
  /** A batch was stored: look now. */
  notify(): void;
  /** Stops after the batch in hand (if any) is done. */
  stop(): Promise<void>;
}

export function startCallbackWorker(o: CallbackWorkerOptions): CallbackWorker {
  const owner = `tracking-${randomUUID()}`;
  let running = true;
  let wake: (() => void) | null = null;
  let pending = true; // look at start: batches stored before a restart

  const idle = () =>
    new Promise<void>((resolve) => {
      if (pending || !running) return resolve();
      const timer = setTimeout(done, o.pollMs);
      timer.unref();
      function done() {
        clearTimeout(timer);
        wake = null;
        resolve();
      }
      wake = done;
    });

  async function processOne(batch: StoredCallbackBatch): Promise<void> {
    const lease = providerCallbacks.lease(o.db, batch.id, owner, CALLBACK_LEASE_MS);
    const stopRenewing = keepLeaseAlive(lease, { floorMs: 1000 });
    try {
      const outcomes = await o.db.transaction(async (tx) => {
        const result = await processSparkPostBatchIn(tx, batch);
        if (!(await providerCallbacks.finish(tx, batch.id, owner)))
          throw new Error('the batch lease was lost before its events were committed');
        return result;
      });
      const counts = new Map<CallbackEventOutcome, number>();
      for (const x of outcomes) counts.set(x, (counts.get(x) ?? 0) + 1);
      for (const [outcome, n] of counts) callbackEvents.inc({ provider: batch.provider, outcome }, n);
      if (counts.get('recorded')) o.afterCommit();
      o.logger.debug('provider callback batch processed', {
        batch: batch.id,
        mailer_id: batch.mailerId,
        ...Object.fromEntries(counts),
      });
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      const level = batch.attempts >= CALLBACK_MAX_ATTEMPTS ? 'error' : 'warn';
      o.logger[level]('provider callback batch failed', {
        batch: batch.id,
        mailer_id: batch.mailerId,
        attempt: batch.attempts,
        error,
      });
      const retryInMs = jittered(backoffMs(batch.attempts - 1, RETRY));
      await providerCallbacks.fail(o.db, batch.id, owner, error, retryInMs).catch(() => undefined);
    } finally {
      stopRenewing();
    }
  }

  const loop = (async () => {
    while (running) {
      pending = false;
      let batch: StoredCallbackBatch | null = null;
      try {
        batch = await providerCallbacks.claim(o.db, owner, CALLBACK_LEASE_MS, CALLBACK_MAX_ATTEMPTS);
      } catch (err) {
        if (running) o.logger.warn('provider callback claim failed', { error: (err as Error).message });
      }
      if (batch) {
        await processOne(batch);
        pending = true; // there may be more
      } else {
        await idle();
      }
    }
  })();

  return {
    notify() {
      pending = true;
      wake?.();
    },
    async stop() {
      running = false;
      wake?.();
      await loop;
    },
  };
}
