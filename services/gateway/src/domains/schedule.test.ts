import { type CheckTiming, firstCheck, nextCheck } from './schedule';

const MIN = 60_000;
const HOUR = 60 * MIN;
const t: CheckTiming = {
  firstDelayMs: 5 * MIN,
  maxBackoffMs: 6 * HOUR,
  unverifiedWindowMs: 72 * HOUR,
  verifiedIntervalMs: 24 * HOUR,
};
const created = new Date('2025-01-01T00:00:00Z');
const at = (ms: number) => new Date(created.getTime() + ms);

describe('domain re-check schedule', () => {
  it('first checks five minutes after creation', () => {
    expect(firstCheck(created, t)).toEqual({ nextCheckAt: at(5 * MIN), unverifiedSince: created });
  });

  it('backs off while unverified: the delay grows with the unverified age, capped', () => {
    const before = { verified: false, unverifiedSince: created, createdAt: created };
    const times: number[] = [];
    let now = at(5 * MIN);
    for (let i = 0; i < 40; i++) {
      const next = nextCheck(before, false, now, t, false);
      if (!next.nextCheckAt) break;
      expect(next.unverifiedSince).toEqual(created);
      times.push(next.nextCheckAt.getTime() - now.getTime());
      now = next.nextCheckAt;
    }
    expect(times.slice(0, 4)).toEqual([5 * MIN, 10 * MIN, 20 * MIN, 40 * MIN]);
    expect(Math.max(...times)).toBe(6 * HOUR);
    // The last check is at the end of the window, then none.
    expect(now).toEqual(at(72 * HOUR));
    expect(nextCheck(before, false, now, t, false)).toEqual({ nextCheckAt: null, unverifiedSince: created });
  });

  it('checks a verified domain daily; losing its records starts a new unverified window', () => {
    const now = at(10 * 24 * HOUR);
    expect(
      nextCheck({ verified: false, unverifiedSince: created, createdAt: created }, true, now, t, false),
    ).toEqual({
      nextCheckAt: new Date(now.getTime() + 24 * HOUR),
      unverifiedSince: null,
    });
    expect(
      nextCheck({ verified: true, unverifiedSince: null, createdAt: created }, false, now, t, false),
    ).toEqual({
      nextCheckAt: new Date(now.getTime() + 5 * MIN),
      unverifiedSince: now,
    });
  });

  it('an explicit verify after the window opens a new one', () => {
    const now = at(100 * HOUR);
    const before = { verified: false, unverifiedSince: created, createdAt: created };
    expect(nextCheck(before, false, now, t, false).nextCheckAt).toBeNull();
    expect(nextCheck(before, false, now, t, true)).toEqual({
      nextCheckAt: new Date(now.getTime() + 5 * MIN),
      unverifiedSince: now,
    });
  });
});
