/**
 * How a batch answers its callers, shared by both batchers of this folder (Batcher: one queue,
 * batches one at a time; TurnBatcher: one batch per group and event-loop turn): the run's results
 * settle the callers one by one, in order. A run that throws (at once or later), or answers with
 * a wrong number of results, fails every caller of the batch; a result that is a BatchItemError
 * fails only its own caller.
 */
export class BatchItemError {
  constructor(readonly error: unknown) {}
}

export interface BatchWaiter<O> {
  resolve(value: O): void;
  reject(err: unknown): void;
}

/** Runs `run(items)` and settles `waiters` (one per item) with what it answers. */
export function settleBatch<I, O>(
  items: I[],
  waiters: ReadonlyArray<BatchWaiter<O>>,
  run: (items: I[]) => Promise<ReadonlyArray<O | BatchItemError>>,
): Promise<void> {
  let running: Promise<ReadonlyArray<O | BatchItemError>>;
  try {
    running = run(items);
  } catch (err) {
    running = Promise.reject(err);
  }
  return running.then(
    (results) => {
      if (results.length !== waiters.length) {
        const err = new Error(`batch of ${waiters.length} answered ${results.length} results`);
        for (const w of waiters) w.reject(err);
        return;
      }
      waiters.forEach((w, i) => {
        const r = results[i];
        if (r instanceof BatchItemError) w.reject(r.error);
        else w.resolve(r as O);
      });
    },
    (err) => {
      for (const w of waiters) w.reject(err);
    },
  );
}
