/**
 * Coalesces concurrent calls into batches (group commit / data loader): a call made while no
 * batch is running starts one on the next turn of the event loop, taking every call made until
 * then; calls made while a batch runs go into the next one. One failed batch fails its calls.
 */
export class Batcher<I, O> {
  private queue: Array<{ item: I; resolve: (o: O) => void; reject: (err: unknown) => void }> = [];
  private busy = false;

  constructor(
    private readonly run: (items: I[]) => Promise<O[]>,
    private readonly maxBatch = 200,
  ) {}

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.busy) {
        this.busy = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    const batch = this.queue.splice(0, this.maxBatch);
    if (batch.length === 0) {
      this.busy = false;
      return;
    }
    this.run(batch.map((b) => b.item))
      .then(
        (results) => batch.forEach((b, i) => b.resolve(results[i]!)),
        (err) => batch.forEach((b) => b.reject(err)),
      )
      .finally(() => this.flush());
  }
}
