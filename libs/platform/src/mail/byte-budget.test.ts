import { ByteBudget } from './byte-budget';

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
});
