import { BatchItemError, Batcher, isDataError } from './batcher';

describe('Batcher', () => {
  it('runs the calls of one turn as one batch and answers each with its own result', async () => {
    const batches: number[][] = [];
    const b = new Batcher(async (items: number[]) => {
      batches.push(items);
      return items.map((i) => i * 10);
    });
    const results = await Promise.all([1, 2, 3].map((i) => b.submit(i)));
    expect(results).toEqual([10, 20, 30]);
    expect(batches).toEqual([[1, 2, 3]]);
  });

  it('puts calls made while a batch runs into the next one, at most maxBatch each', async () => {
    const batches: number[][] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const b = new Batcher(async (items: number[]) => {
      batches.push(items);
      if (batches.length === 1) await gate;
      return items;
    }, 2);
    const first = b.submit(1);
    await new Promise((r) => setImmediate(r));
    const later = [2, 3, 4].map((i) => b.submit(i));
    release();
    expect(await Promise.all([first, ...later])).toEqual([1, 2, 3, 4]);
    expect(batches).toEqual([[1], [2, 3], [4]]);
  });

  it('keeps a batch under maxWeight, but always takes at least one call', async () => {
    const batches: number[][] = [];
    const b = new Batcher(
      async (items: number[]) => {
        batches.push(items);
        return items;
      },
      100,
      { weigh: (i) => i, maxWeight: 10 },
    );
    await Promise.all([4, 5, 2, 30, 1, 1].map((i) => b.submit(i)));
    expect(batches).toEqual([[4, 5], [2], [30], [1, 1]]);
  });

  it('fails every call of a batch that throws, and goes on with the next batch', async () => {
    let calls = 0;
    const b = new Batcher(async (items: string[]) => {
      calls++;
      if (calls === 1) throw new Error('statement failed');
      return items;
    });
    const failed = await Promise.allSettled([b.submit('a'), b.submit('b')]);
    expect(failed.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(await b.submit('c')).toBe('c');
  });

  it('fails only the calls a batch answers with a BatchItemError', async () => {
    const b = new Batcher(async (items: string[]) =>
      items.map((i) => (i === 'bad' ? new BatchItemError(new Error(`no ${i}`)) : i.toUpperCase())),
    );
    const results = await Promise.allSettled(['a', 'bad', 'c'].map((i) => b.submit(i)));
    expect(results).toEqual([
      { status: 'fulfilled', value: 'A' },
      { status: 'rejected', reason: new Error('no bad') },
      { status: 'fulfilled', value: 'C' },
    ]);
  });

  it('refuses a batch size below 1', () => {
    expect(() => new Batcher(async (i: number[]) => i, 0)).toThrow(/maxBatch/);
  });

  it('isDataError: PostgreSQL classes 22 and 23 only', () => {
    expect(
      [{ code: '22P02' }, { code: '23505' }, { code: '08006' }, { code: '57P01' }, {}, null].map(isDataError),
    ).toEqual([true, true, false, false, false, false]);
  });
});
