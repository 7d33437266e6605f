import { type Kv, createMemoryKv } from '../kv';
import { HitBatcher } from './hit-batcher';

const WINDOW = 3_600_000;

/** The in-process kv, recording every hitWindow call it gets. */
function recordingKv() {
  const kv = createMemoryKv();
  const calls: Array<{ key: string; hits: number | undefined }> = [];
  const recorded: Pick<Kv, 'hitWindow'> = {
    hitWindow: (key, windowMs, hits) => {
      calls.push({ key, hits });
      return kv.hitWindow(key, windowMs, hits);
    },
  };
  return { kv, calls, recorded };
}

describe('HitBatcher', () => {
  it('sends the hits of one loop turn as one call per key, each hit getting its own count', async () => {
    const { kv, calls, recorded } = recordingKv();
    const batcher = new HitBatcher(recorded);
    const hits = await Promise.all([
      ...Array.from({ length: 5 }, () => batcher.hit('a', WINDOW)),
      ...Array.from({ length: 2 }, () => batcher.hit('b', WINDOW)),
    ]);
    expect(hits.map((h) => h.count)).toEqual([1, 2, 3, 4, 5, 1, 2]);
    expect(calls).toEqual([
      { key: 'a', hits: 5 },
      { key: 'b', hits: 2 },
    ]);
    for (const h of hits) expect(h.resetAtMs % WINDOW).toBe(0);
    await kv.close();
  });

  it('continues the count in later turns and keeps windows of different lengths apart', async () => {
    const { kv, calls, recorded } = recordingKv();
    const batcher = new HitBatcher(recorded);
    await Promise.all([batcher.hit('a', WINDOW), batcher.hit('a', WINDOW)]);
    const later = await Promise.all([batcher.hit('a', WINDOW), batcher.hit('a', 60_000)]);
    expect(later.map((h) => h.count)).toEqual([3, 1]);
    expect(calls.map((c) => c.hits)).toEqual([2, 1, 1]);
    await kv.close();
  });

  it('fails every hit of a batch whose call fails, and the next batch tries again', async () => {
    let fail = true;
    const kv = createMemoryKv();
    const batcher = new HitBatcher({
      hitWindow: (key, windowMs, hits) =>
        fail ? Promise.reject(new Error('kv down')) : kv.hitWindow(key, windowMs, hits),
    });
    const failed = await Promise.allSettled([batcher.hit('a', WINDOW), batcher.hit('a', WINDOW)]);
    expect(failed.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    fail = false;
    expect((await batcher.hit('a', WINDOW)).count).toBe(1);
    await kv.close();
  });
});
