import { mapConcurrent } from './concurrent';

const tick = () => new Promise((r) => setImmediate(r));

describe('mapConcurrent', () => {
  it('runs at most `limit` at once, yields every non-null result once, in completion order', async () => {
    let active = 0;
    let peak = 0;
    const fn = async (n: number) => {
      active++;
      peak = Math.max(peak, active);
      for (let i = 0; i < (n % 3) + 1; i++) await tick();
      active--;
      return n % 5 === 0 ? null : n * 10;
    };
    const got: number[] = [];
    for await (const v of mapConcurrent([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], 3, fn)) got.push(v);
    expect(peak).toBe(3);
    expect(got.sort((a, b) => a - b)).toEqual([10, 20, 30, 40, 60, 70, 80, 90, 110]);
  });

  it('throws the first error and lets the requests in flight finish first', async () => {
    const finished: number[] = [];
    const fn = async (n: number) => {
      await tick();
      if (n === 2) throw new Error('boom');
      await tick();
      finished.push(n);
      return n;
    };
    const walk = async () => {
      for await (const _ of mapConcurrent([1, 2, 3, 4], 2, fn));
    };
    await expect(walk()).rejects.toThrow('boom');
    // 1 was in flight beside 2 and ended before the error came out; 3 and 4 never started.
    expect(finished).toEqual([1]);
  });

  it('a consumer that stops early starts no more requests and leaves none running', async () => {
    const started: number[] = [];
    let running = 0;
    const fn = async (n: number) => {
      started.push(n);
      running++;
      await tick();
      running--;
      return n;
    };
    for await (const v of mapConcurrent([1, 2, 3, 4, 5, 6], 2, fn)) if (v >= 1) break;
    expect(running).toBe(0);
    expect(started.length).toBeLessThanOrEqual(3);
  });
});
