/**
 * Coalesces concurrent calls into batches (group commit / data loader): a call made while no
 * batch is running starts one on the next turn of the event loop, taking every call made until
 * then (at most `maxBatch`, and with `weigh`, at most `maxWeight` in all unless one item alone
 * weighs more); calls made while a batch runs go into the next one. Batches run one at a time, so
 * under load they grow by themselves and at low load a call waits one turn.
 *
 * Failures: a batch that throws fails all its calls. A run that can tell which items failed
 * returns a BatchItemError in their place instead: only those calls fail (e.g. a multi-row
 * statement that failed, retried item by item, see the gateway's send group commit).
 */
import { type BatchItemError, type BatchWaiter, settleBatch } from './settle';

export { BatchItemError } from './settle';

/**
 * A failure of a multi-row statement caused by the data of its rows (PostgreSQL SQLSTATE classes
 * 22 and 23: a value or constraint one item breaks), not by the database: the run can write the
 * items again one by one and fail only the faulty ones (BatchItemError).
 */
export function isDataError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^2[23]/.test(code);
}

/** Bounds the size of a batch by what its items weigh (e.g. the rows they write). */
export interface BatchWeight<I> {
  weigh: (item: I) => number;
  maxWeight: number;
}

export class Batcher<I, O> {
  private queue: Array<BatchWaiter<O> & { item: I }> = [];
  private busy = false;

  constructor(
    private readonly run: (items: I[]) => Promise<Array<O | BatchItemError>>,
    private readonly maxBatch = 200,
    private readonly weight?: BatchWeight<I>,
  ) {
    if (!Number.isInteger(maxBatch) || maxBatch < 1)
      throw new Error(`Batcher: maxBatch must be >= 1 (got ${maxBatch})`);
  }

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.busy) {
        this.busy = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** How many queued calls the next batch takes. */
  private nextSize(): number {
    const limit = Math.min(this.maxBatch, this.queue.length);
    if (!this.weight) return limit;
    let total = 0;
    for (let n = 0; n < limit; n++) {
      total += this.weight.weigh(this.queue[n]!.item);
      if (total > this.weight.maxWeight) return Math.max(1, n);
    }
    return limit;
  }

  private flush(): void {
    const batch = this.queue.splice(0, this.nextSize());
    if (batch.length === 0) {
      this.busy = false;
      return;
    }
    void settleBatch(
      batch.map((b) => b.item),
      batch,
      this.run,
    ).finally(() => this.flush());
  }
}
