/**
 * Per-account batching (docs/webhooks.md "What is delivered where"): events of one account are collected until
 * `maxItems` have arrived or `waitMs` passed since the first, then flushed together; each
 * `add` resolves once the batch holding it is flushed (the bus message is acknowledged only
 * then, so a crash before the flush committed loses nothing: the broker redelivers). A failed
 * flush rejects every add of its batch. Defaults keep the added latency well under 1 s.
 * `add` takes the items of one bus message together: they always land in ONE batch (a batch
 * that cannot take them all is flushed first; a group larger than `maxItems` is a batch of its
 * own), so a message's events are stored by one statement or not at all.
 */
export interface BatchOptions<T> {
  maxItems: number;
  waitMs: number;
  flush: (key: string, items: T[]) => Promise<void>;
}

interface Pending<T> {
  items: T[];
  waiters: Array<{ resolve: () => void; reject: (err: unknown) => void }>;
  timer: NodeJS.Timeout | null;
}

export class AccountBatcher<T> {
  private readonly open = new Map<string, Pending<T>>();
  private readonly flushing = new Set<Promise<void>>();

  constructor(private readonly opts: BatchOptions<T>) {}

  add(key: string, ...items: T[]): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let p = this.open.get(key);
      if (p && p.items.length + items.length > this.opts.maxItems) {
        this.flushKey(key);
        p = undefined;
      }
      if (!p) {
        p = { items: [], waiters: [], timer: null };
        this.open.set(key, p);
        p.timer = setTimeout(() => this.flushKey(key), this.opts.waitMs);
      }
      p.items.push(...items);
      p.waiters.push({ resolve, reject });
      if (p.items.length >= this.opts.maxItems) this.flushKey(key);
    });
  }

  /** Flushes every open batch now and waits for all flushes (shutdown). */
  async drain(): Promise<void> {
    for (const key of [...this.open.keys()]) this.flushKey(key);
    while (this.flushing.size > 0) await Promise.allSettled([...this.flushing]);
  }

  private flushKey(key: string): void {
    const p = this.open.get(key);
    if (!p) return;
    this.open.delete(key);
    if (p.timer) clearTimeout(p.timer);
    const run = this.opts
      .flush(key, p.items)
      .then(
        () => {
          for (const w of p.waiters) w.resolve();
        },
        (err) => {
          for (const w of p.waiters) w.reject(err);
        },
      )
      .finally(() => this.flushing.delete(run));
    this.flushing.add(run);
  }
}
