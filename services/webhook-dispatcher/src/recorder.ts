/**
 * Group commit: items handed in while a write is running are written together by the next one,
 * so concurrent work costs one round trip instead of one each. Used twice by the dispatcher:
 * - attempt outcomes (libs/store recordDeliveryAttempts, one statement): an attempt's slot is free
 *   as soon as its HTTP exchange ends, and an outcome not yet written when the process dies
 *   leaves its row leased: it comes due again after the lease (at-least-once); a failed write is
 *   reported (`onError`) and its items resolve;
 * - stored batches (flush.ts: batches of several accounts in one INSERT): without `onError` a
 *   failed write rejects every item of its group (their bus messages are then retried).
 */
export class GroupWriter<T> {
  private queued: Array<{ item: T; done: () => void; failed: (err: unknown) => void }> = [];
  private writing: Promise<void> | null = null;

  constructor(
    private readonly write: (items: T[]) => Promise<void>,
    private readonly onError: ((err: unknown, items: T[]) => void) | null,
    private readonly maxItems = 500,
  ) {}

  /** Queues an item; resolves once its group is written (or the failed write was reported). */
  add(item: T): Promise<void> {
    return new Promise((done, failed) => {
      this.queued.push({ item, done, failed });
      this.writing ??= this.loop();
    });
  }

  /** Resolves once everything queued so far is written. */
  async drain(): Promise<void> {
    while (this.writing) await this.writing;
  }

  private async loop(): Promise<void> {
    // The first item waits a tick, so items of the same moment go together.
    await new Promise<void>((r) => setImmediate(r));
    while (this.queued.length > 0) {
      const group = this.queued.splice(0, this.maxItems);
      const items = group.map((g) => g.item);
      try {
        await this.write(items);
        for (const g of group) g.done();
      } catch (err) {
        if (this.onError) {
          this.onError(err, items);
          for (const g of group) g.done();
        } else for (const g of group) g.failed(err);
      }
    }
    this.writing = null;
  }
}
