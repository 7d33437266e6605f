import { TurnBatcher } from './turn-batcher';

describe('TurnBatcher', () => {
  it('runs the calls of one turn as one batch per group, answering each caller in order', async () => {
    const batches: Array<[string, number[]]> = [];
    const batcher = new TurnBatcher<number, string>(async (group, inputs) => {
      batches.push([group, inputs]);
      return inputs.map((n) => `${group}:${n * 10}`);
    });
    const results = await Promise.all([batcher.add('a', 1), batcher.add('b', 2), batcher.add('a', 3)]);
    expect(results).toEqual(['a:10', 'b:20', 'a:30']);
    expect(batches).toEqual([
      ['a', [1, 3]],
      ['b', [2]],
    ]);
    // A later turn is a batch of its own.
    expect(await batcher.add('a', 4)).toBe('a:40');
    expect(batches).toHaveLength(3);
  });

  it('fails every caller of a batch that fails, throws or answers the wrong number of results', async () => {
    const failing = new TurnBatcher<number, number>(async () => {
      throw new Error('store down');
    });
    const throwing = new TurnBatcher<number, number>(() => {
      throw new Error('thrown');
    });
    const short = new TurnBatcher<number, number>(async (_g, inputs) => inputs.slice(1));
    for (const [batcher, message] of [
      [failing, 'store down'],
      [throwing, 'thrown'],
      [short, 'batch of 2 answered 1 results'],
    ] as const) {
      const settled = await Promise.allSettled([batcher.add('g', 1), batcher.add('g', 2)]);
      expect(settled.map((s) => (s.status === 'rejected' ? (s.reason as Error).message : 'ok'))).toEqual([
        message,
        message,
      ]);
    }
  });

  it('keeps other groups of the turn going when one fails', async () => {
    const batcher = new TurnBatcher<number, number>(async (group, inputs) => {
      if (group === 'bad') throw new Error('bad group');
      return inputs;
    });
    const settled = await Promise.allSettled([batcher.add('bad', 1), batcher.add('good', 2)]);
    expect(settled.map((s) => s.status)).toEqual(['rejected', 'fulfilled']);
  });
});
