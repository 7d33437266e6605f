import { watchMemory } from '../memory-peak';

// Jest runs this file in a worker beside others: the worker's own memory moves meanwhile (a
// previous file's environment freed, concurrent work), by tens of MB. The bounds leave room for
// that and still tell the cases apart: 128 MB held must show as at least half, 512 MB of garbage
// as less than 32 MB; without the forced collection or the floor, the cases below fail.

const MiB = 1024 * 1024;
const turn = () => new Promise((r) => setTimeout(r, 5));

describe('watchMemory', () => {
  it('counts data held while watching', async () => {
    const watch = watchMemory();
    const held: Buffer[] = [];
    for (let i = 0; i < 128; i++) {
      held.push(Buffer.alloc(MiB, 1));
      await turn();
    }
    expect(watch.stop()).toBeGreaterThanOrEqual(64 * MiB);
    expect(held).toHaveLength(128);
  });

  it('does not count garbage: 512 MB allocated and dropped a megabyte at a time', async () => {
    const watch = watchMemory();
    let last = 0;
    for (let i = 0; i < 512; i++) {
      last += Buffer.alloc(MiB, i % 256)[0]!;
      await turn();
    }
    expect(watch.stop()).toBeLessThan(32 * MiB);
    expect(last).toBeGreaterThan(0);
  });

  it('counts data held while memory from before the watch is freed (a torn-down earlier file)', async () => {
    let earlier: Buffer[] | null = Array.from({ length: 96 }, () => Buffer.alloc(MiB, 2));
    const watch = watchMemory();
    await turn();
    earlier = null;
    const held: Buffer[] = [];
    for (let i = 0; i < 128; i++) {
      held.push(Buffer.alloc(MiB, 1));
      await turn();
    }
    expect(watch.stop()).toBeGreaterThanOrEqual(64 * MiB);
    expect([earlier, held.length]).toEqual([null, 128]);
  });
});
