import { ByteBudget } from './byte-budget';

const tick = () => new Promise((r) => setImmediate(r));

describe('ByteBudget', () => {
  test('holds up to the limit exactly, refuses a reservation that would pass it, whole', () => {
    const b = new ByteBudget(100);
    expect(b.tryReserve(60)).toBe(true);
    expect(b.tryReserve(41)).toBe(false);
    expect(b.held).toBe(60);
    expect(b.tryReserve(40)).toBe(true);
    expect(b.held).toBe(100);
    expect(b.tryReserve(1)).toBe(false);
  });

  test('released bytes can be reserved again; the peak stays the highest ever held', () => {
    const b = new ByteBudget(100);
    b.tryReserve(70);
    b.release(50);
    expect(b.held).toBe(20);
    expect(b.tryReserve(80)).toBe(true);
    expect(b.peak).toBe(100);
    b.release(100);
    expect([b.held, b.peak]).toEqual([0, 100]);
  });

  test('releasing more than held never goes below zero', () => {
    const b = new ByteBudget(10);
    b.tryReserve(5);
    b.release(8);
    expect(b.held).toBe(0);
    expect(b.tryReserve(10)).toBe(true);
  });

  test('a reservation never overtakes a waiting acquire', async () => {
    const b = new ByteBudget(100);
    const first = await b.acquire(90);
    const waiting = b.acquire(50);
    await tick();
    expect(b.tryReserve(5)).toBe(false);
    first();
    const release = await waiting;
    expect(b.held).toBe(50);
    release();
  });

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
    expect(b.held).toBe(60);
    rb!();
    rc!();
    rc!(); // releasing twice gives back once
    expect(b.held).toBe(0);
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
    expect(b.held).toBe(100);
    release();
    expect(b.held).toBe(0);
  });
});
