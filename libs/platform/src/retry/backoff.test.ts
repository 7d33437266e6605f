import { MAILBOX_RETRY_MAX_MS, backoffMs, backoffOrAsked, jittered, jitteredExact } from './backoff';

const schedule = { minMs: 100, maxMs: 1_000, maxDoublings: 20 };

describe('backoffMs', () => {
  it('doubles the first wait once per earlier attempt', () => {
    expect([0, 1, 2, 3].map((a) => backoffMs(a, schedule))).toEqual([100, 200, 400, 800]);
  });

  it('never waits longer than maxMs', () => {
    expect(backoffMs(4, schedule)).toBe(1_000);
    expect(backoffMs(1_000, schedule)).toBe(1_000);
  });

  it('stops doubling after maxDoublings, below the cap too', () => {
    const bounded = { minMs: 10, maxMs: 1_000_000, maxDoublings: 3 };
    expect(backoffMs(3, bounded)).toBe(80);
    expect(backoffMs(9, bounded)).toBe(80);
  });

  it('stays 0 (not NaN) with a zero first wait and a huge attempt', () => {
    expect(backoffMs(5_000, { minMs: 0, maxMs: 10, maxDoublings: 8 })).toBe(0);
  });
});

describe('jittered', () => {
  it('lies between half of the wait and all of it', () => {
    expect(jittered(1_000, () => 0)).toBe(500);
    expect(jittered(1_000, () => 1)).toBe(1_000);
    expect(jittered(1_000, () => 0.5)).toBe(750);
  });

  it('rounds to whole milliseconds; jitteredExact does not', () => {
    expect(jittered(3, () => 0)).toBe(2);
    expect(jitteredExact(3, () => 0)).toBe(1.5);
    expect(jitteredExact(3, () => 1)).toBe(3);
  });

  it('draws from Math.random by default', () => {
    for (let i = 0; i < 50; i++) {
      const ms = jittered(1_000);
      expect(ms).toBeGreaterThanOrEqual(500);
      expect(ms).toBeLessThanOrEqual(1_000);
      const exact = jitteredExact(1_000);
      expect(exact).toBeGreaterThanOrEqual(500);
      expect(exact).toBeLessThanOrEqual(1_000);
    }
  });
});

describe('backoffOrAsked', () => {
  it('waits what the remote party asked when that is longer', () => {
    expect(backoffOrAsked(0, schedule, 5_000)).toBe(5_000);
  });

  it('keeps the back-off when the party asked for less or nothing', () => {
    expect(backoffOrAsked(2, schedule, 10)).toBe(400);
    expect(backoffOrAsked(2, schedule, null)).toBe(400);
    expect(backoffOrAsked(2, schedule, undefined)).toBe(400);
  });
});

it('caps the mailbox retries at five minutes', () => {
  expect(MAILBOX_RETRY_MAX_MS).toBe(300_000);
});
