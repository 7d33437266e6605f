/**
 * Group commit: items handed in while a write is running are written together by the next one
 * (the dispatcher's attempt outcomes: libs/store recordDeliveryAttempts, one statement), so
 * concurrent attempts cost one round trip instead of one each, and an attempt's slot is free as
 * soon as its HTTP exchange ends. An outcome not yet written when the process dies leaves its
 * row leased: it comes due again after the lease and is attempted again (at-least-once).
 */
export class GroupWriter<T> {
  private queued: Array<{ item: T; done: () => void }> = [];
  private writing: Promise<void> | null = null;

  constructor(
    private readonly write: (items: T[]) => Promise<void>,
    private readonly onError: (err: unknown, items: T[]) => void,
    private readonly maxItems = 500,
  ) {}

  /** Queues an item; resolves once its group is written (or the failed write was reported). */
  add(item: T): Promise<void> {
    return new Promise((done) => {
      this.queued.push({ item, done });
      this.writing ??= this.loop();
    });
  }

  /** Resolves once everything queued so far is written. */
  async drain(): Promise<void> {
    while (this.writing) await this.writing;
  }

  private async loop(): Promise<void> {
    // The first item waits a tick, so outcomes of the same moment go together.
    await new Promise<void>((r) => setImmediate(r));
    while (this.queued.length > 0) {
      const group = this.queued.splice(0, this.maxItems);
      const items = group.map((g) => g.item);
      try {
        await this.write(items);
      } catch (err) {
        this.onError(err, items);
      }
      for (const g of group) g.done();
    }
    this.writing = null;
  }
}
