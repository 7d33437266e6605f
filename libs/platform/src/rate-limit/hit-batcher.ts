/**
 * Coalesces rate-limit hits: the hits one counter key gets within one turn of the event loop go
 * to the kv as ONE `hitWindow(key, windowMs, n)` (Redis: one INCRBY script call) instead of n
 * (TurnBatcher), and each hit gets its own position in the window's count, exactly as n separate
 * atomic increments would have given them (the batch's count minus the hits after it). So the
 * budget is enforced as exactly as before, across replicas too (the increment is atomic in
 * Redis), while a busy tenant costs the gateway and Redis one command per loop turn instead of
 * one per request. A failing kv call fails every hit of its batch (the caller fails open).
 */
import { TurnBatcher } from '../batch/turn-batcher';
import type { Kv, WindowHit } from '../kv/types';

export class HitBatcher {
  private readonly batcher: TurnBatcher<null, WindowHit>;

  constructor(kv: Pick<Kv, 'hitWindow'>) {
    this.batcher = new TurnBatcher(async (group, hits) => {
      const split = group.indexOf('\n');
      const windowMs = Number(group.slice(0, split));
      const { count, resetAtMs } = await kv.hitWindow(group.slice(split + 1), windowMs, hits.length);
      const first = count - hits.length + 1;
      return hits.map((_, i) => ({ count: first + i, resetAtMs }));
    });
  }

  /** Counts one hit of `key` in its fixed window of `windowMs`. */
  hit(key: string, windowMs: number): Promise<WindowHit> {
    return this.batcher.add(`${windowMs}\n${key}`, null);
  }
}
