import { GroupWriter } from './recorder';

describe('GroupWriter', () => {
  it('writes what arrives while a write runs as one group, in order', async () => {
    const writes: number[][] = [];
    let release: () => void = () => {};
    const w = new GroupWriter<number>(
      async (items) => {
        writes.push(items);
        if (writes.length === 1)
          await new Promise<void>((r) => {
            release = r;
          });
      },
      () => {},
    );
    const first = w.add(1);
    await new Promise((r) => setImmediate(r));
    const rest = [w.add(2), w.add(3), w.add(4)];
    release();
    await Promise.all([first, ...rest]);
    expect(writes).toEqual([[1], [2, 3, 4]]);
  });

  it('reports a failed write and goes on with the next group', async () => {
    const failed: number[][] = [];
    let calls = 0;
    const w = new GroupWriter<number>(
      async () => {
        if (++calls === 1) throw new Error('db down');
      },
      (_err, items) => failed.push(items),
      2,
    );
    await Promise.all([w.add(1), w.add(2), w.add(3)]);
    await w.drain();
    expect(failed).toEqual([[1, 2]]);
    expect(calls).toBe(2);
  });

  it('without onError, a failed write rejects every item of its group', async () => {
    let calls = 0;
    const w = new GroupWriter<number>(
      async () => {
        if (++calls === 1) throw new Error('db down');
      },
      null,
      2,
    );
    const results = await Promise.allSettled([w.add(1), w.add(2), w.add(3)]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'fulfilled']);
  });
});
