import { watchMemory } from '../memory-peak';

const MiB = 1024 * 1024;
const turn = () => new Promise((r) => setTimeout(r, 5));

describe('watchMemory', () => {
  it('counts data held while watching', async () => {
    const watch = watchMemory();
    const held: Buffer[] = [];
    for (let i = 0; i < 64; i++) {
      held.push(Buffer.alloc(MiB, 1));
      await turn();
    }
    expect(watch.stop()).toBeGreaterThanOrEqual(60 * MiB);
    expect(held).toHaveLength(64);
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
});
