import { ByteBudget, copyCostBytes } from './byte-budget';

const tick = () => new Promise((r) => setImmediate(r));

describe('ByteBudget', () => {
  it('lets copies run while their bytes fit, the rest wait in order', async () => {
    const b = new ByteBudget(100);
    const order: string[] = [];
    const a = await b.acquire(60);
    const pending = [
      b.acquire(50).then((r) => {
        order.push('b');
        return r;
      }),
      b.acquire(10).then((r) => {
        order.push('c');
        return r;
      }),
    ];
    await tick();
    // c would fit, but b came first: no overtaking (a large copy is not starved).
    expect(order).toEqual([]);
    expect(b.waiting).toBe(2);
    a();
    const [rb, rc] = await Promise.all(pending);
    expect(order).toEqual(['b', 'c']);
    expect(b.inUse).toBe(60);
    rb!();
    rc!();
    rc!(); // releasing twice gives back once
    expect(b.inUse).toBe(0);
  });

  it('runs a copy larger than the whole budget alone', async () => {
    const b = new ByteBudget(100);
    const small = await b.acquire(1);
    let big = false;
    const pending = b.acquire(10_000).then((r) => {
      big = true;
      return r;
    });
    await tick();
    expect(big).toBe(false);
    small();
    const release = await pending;
    expect(b.inUse).toBe(100);
    release();
    expect(b.inUse).toBe(0);
  });

  it('estimates a copy at about three times its stored request', () => {
    expect(copyCostBytes(10 * 1024 * 1024)).toBe(30 * 1024 * 1024 + 64 * 1024);
  });
});
