/**
 * Coalesces rate-limit hits: the hits one counter key gets within one turn of the event loop go
 * to the kv as ONE `hitWindow(key, windowMs, n)` (Redis: one INCRBY script call) instead of n,
 * and each hit gets its own position in the window's count, exactly as n separate atomic
 * increments would have given them (the batch's count minus the hits after it). So the budget is
 * enforced as exactly as before, across replicas too (the increment is atomic in Redis), while a
 * busy tenant costs the gateway and Redis one command per loop turn instead of one per request.
 * A hit waits at most until the end of the current loop turn (setImmediate) before its batch
 * is sent; a failing kv call fails every hit of its batch (the caller fails open).
 */
import type { Kv, WindowHit } from '@mailyard/platform';

interface Waiter {
  resolve(hit: WindowHit): void;
  reject(err: unknown): void;
}

export class HitBatcher {
  private readonly pending = new Map<string, { windowMs: number; waiters: Waiter[] }>();
  private scheduled = false;

  constructor(private readonly kv: Pick<Kv, 'hitWindow'>) {}

  /** Counts one hit of `key` in its fixed window of `windowMs`. */
  hit(key: string, windowMs: number): Promise<WindowHit> {
    return new Promise((resolve, reject) => {
      const batchKey = `${windowMs}\n${key}`;
      let batch = this.pending.get(batchKey);
      if (!batch) {
        batch = { windowMs, waiters: [] };
        this.pending.set(batchKey, batch);
      }
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
    for (const [batchKey, { windowMs, waiters }] of batches) {
      const key = batchKey.slice(batchKey.indexOf('\n') + 1);
      this.kv.hitWindow(key, windowMs, waiters.length).then(
        ({ count, resetAtMs }) => {
          const first = count - waiters.length + 1;
          waiters.forEach((w, i) => w.resolve({ count: first + i, resetAtMs }));
        },
        (err) => {
          for (const w of waiters) w.reject(err);
        },
      );
    }
  }
}
