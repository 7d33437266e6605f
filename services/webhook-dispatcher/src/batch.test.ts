import { AccountBatcher } from './batch';

describe('AccountBatcher', () => {
  it('flushes an account when it reaches maxItems, keeping accounts apart', async () => {
    const flushed: Array<[string, number[]]> = [];
    const b = new AccountBatcher<number>({
      maxItems: 3,
      waitMs: 60_000,
      flush: async (key, items) => {
        flushed.push([key, items]);
      },
    });
    const adds = [b.add('a', 1), b.add('b', 10), b.add('a', 2), b.add('a', 3)];
    await Promise.all([adds[0], adds[2], adds[3]]);
    expect(flushed).toEqual([['a', [1, 2, 3]]]);
    await b.drain();
    await adds[1];
    expect(flushed).toEqual([
      ['a', [1, 2, 3]],
      ['b', [10]],
    ]);
  });

  it('keeps the items of one add in one batch: flushes the open batch first when they do not fit', async () => {
    const flushed: number[][] = [];
    const b = new AccountBatcher<number>({
      maxItems: 4,
      waitMs: 60_000,
      flush: async (_k, items) => void flushed.push(items),
    });
    const adds = [b.add('a', 1, 2), b.add('a', 3, 4, 5), b.add('a', 6, 7, 8, 9, 10, 11), b.add('a', 12)];
    await Promise.all(adds.slice(0, 3));
    expect(flushed).toEqual([
      [1, 2],
      [3, 4, 5],
      [6, 7, 8, 9, 10, 11],
    ]);
    await b.drain();
    await adds[3];
    expect(flushed[3]).toEqual([12]);
  });

  it('flushes after waitMs with what arrived', async () => {
    const flushed: number[][] = [];
    const b = new AccountBatcher<number>({
      maxItems: 100,
      waitMs: 20,
      flush: async (_k, items) => void flushed.push(items),
    });
    await Promise.all([b.add('a', 1), b.add('a', 2)]);
    expect(flushed).toEqual([[1, 2]]);
  });

  it('a failed flush rejects every add of its batch', async () => {
    const b = new AccountBatcher<number>({
      maxItems: 2,
      waitMs: 60_000,
      flush: async () => {
        throw new Error('db down');
      },
    });
    const results = await Promise.allSettled([b.add('a', 1), b.add('a', 2)]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
  });
});
