/**
 * Runs the calls made within one turn of the event loop as one batch per group: `add(group,
 * input)` queues the input, and at the end of the turn (setImmediate) every group's inputs go to
 * `runBatch(group, inputs)` at once, whose results (one per input, in order) settle the callers.
 * Under concurrency many requests share one database or kv round trip (a rate-limit counter, a
 * point read) instead of paying one each; a lone call waits only for the end of its turn. A batch
 * that fails, or answers with the wrong number of results, fails every caller in it.
 */
import { type BatchWaiter, settleBatch } from './settle';

export class TurnBatcher<I, O> {
  private readonly pending = new Map<string, { inputs: I[]; waiters: BatchWaiter<O>[] }>();
  private scheduled = false;

  constructor(private readonly runBatch: (group: string, inputs: I[]) => Promise<O[]>) {}

  add(group: string, input: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      let batch = this.pending.get(group);
      if (!batch) {
        batch = { inputs: [], waiters: [] };
        this.pending.set(group, batch);
      }
      batch.inputs.push(input);
      batch.waiters.push({ resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const batches = [...this.pending.entries()];
    this.pending.clear();
    for (const [group, { inputs, waiters }] of batches) {
      void settleBatch(inputs, waiters, (items) => this.runBatch(group, items));
    }
  }
}
