/**
 * The MX's in-process work on the messages it just stored, bounded: at most `limit` messages in
 * work at once (index.ts, MAX_IN_PROCESS). Beyond it a message is refused (offer returns false)
 * and stays `stored`, for the recovery sweep to process after its lease (recovery-sweep.ts), so
 * when processing is slower than accepting (DNS hanging, a slow database) memory holds at most
 * `limit` messages and nothing accepted is dropped: what is refused here is already committed.
 * A slot is freed when the work settles, failed or not; a failure goes to `onError` (the message
 * is left `stored` for the sweep too). With `bytes`, the items in work also hold their weight in
 * that budget (index.ts: the raw messages, INBOUND_MAX_INFLIGHT_BYTES): an item it cannot take
 * is refused like one past `limit`.
 */
import type { ByteBudget } from '@mailyard/platform';

export interface BoundedWork<T> {
  /** Starts `work(item)` if fewer than `limit` items are in work; false (not started) otherwise. */
  offer(item: T): boolean;
  /** Items in work now. */
  readonly inWork: number;
}

export function boundedWork<T>(
  limit: number,
  work: (item: T) => Promise<unknown>,
  onError: (item: T, err: Error) => void,
  bytes?: { budget: ByteBudget; weigh: (item: T) => number },
): BoundedWork<T> {
  let inWork = 0;
  return {
    offer(item) {
      if (inWork >= limit) return false;
      const weight = bytes ? bytes.weigh(item) : 0;
      if (bytes && !bytes.budget.tryReserve(weight)) return false;
      inWork++;
      // started as a promise chain: a synchronous throw of `work` is a failure like a rejection
      Promise.resolve()
        .then(() => work(item))
        .catch((err: Error) => onError(item, err))
        .finally(() => {
          inWork--;
          bytes?.budget.release(weight);
        });
      return true;
    },
    get inWork() {
      return inWork;
    },
  };
}
