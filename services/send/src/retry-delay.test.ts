import { RETRY_AFTER_STEPS_S, withRetryAfter } from './retry-delay';
import { retryDelayMs } from './settings';

const s = { retryDelaysS: [60, 300, 1800, 7200] };
/** As the consumer computes it: the schedule's delay, then the provider's Retry-After. */
const nextAttemptDelayMs = (
  settings: { retryDelaysS: number[] },
  attempt: number,
  retryAfterMs?: number | null,
) => withRetryAfter(retryDelayMs(settings, attempt), retryAfterMs);

describe('withRetryAfter (after the schedule of SEND_RETRY_DELAYS)', () => {
  it('follows the schedule without a Retry-After', () => {
    expect([1, 2, 3, 4, 5].map((a) => nextAttemptDelayMs(s, a))).toEqual([
      60_000, 300_000, 1_800_000, 7_200_000, 7_200_000,
    ]);
    expect(nextAttemptDelayMs(s, 1, null)).toBe(60_000);
  });

  it('keeps the schedule when the Retry-After is shorter or equal', () => {
    expect(nextAttemptDelayMs(s, 1, 30_000)).toBe(60_000);
    expect(nextAttemptDelayMs(s, 1, 60_000)).toBe(60_000);
    expect(nextAttemptDelayMs(s, 2, 120_000)).toBe(300_000);
    expect(nextAttemptDelayMs(s, 1, 0)).toBe(60_000);
  });

  it('waits the Retry-After when it is longer, rounded up to a step of the ladder', () => {
    const quick = { retryDelaysS: [1, 1, 1] };
    expect(nextAttemptDelayMs(quick, 1, 12_000)).toBe(15_000);
    expect(nextAttemptDelayMs(quick, 1, 15_000)).toBe(15_000);
    expect(nextAttemptDelayMs(quick, 1, 15_001)).toBe(20_000);
    expect(nextAttemptDelayMs(quick, 2, 1_500)).toBe(2_000);
    expect(nextAttemptDelayMs(s, 1, 61_000)).toBe(90_000);
    expect(nextAttemptDelayMs(s, 1, 3_600_000)).toBe(3_600_000);
  });

  it('never waits less than the provider asked, nor less than the schedule', () => {
    for (const retryAfter of [999, 1_000, 7_777, 59_999, 100_000, 4_000_000, 80_000_000]) {
      const d = nextAttemptDelayMs({ retryDelaysS: [2] }, 1, retryAfter);
      expect(d).toBeGreaterThanOrEqual(retryAfter);
      expect(d).toBeGreaterThanOrEqual(2_000);
      expect(RETRY_AFTER_STEPS_S).toContain(d / 1000);
    }
  });

  it('caps a Retry-After beyond a day at 24 h (a bounded set of delay queues)', () => {
    expect(nextAttemptDelayMs(s, 1, 3 * 86_400_000)).toBe(86_400_000);
    expect(nextAttemptDelayMs({ retryDelaysS: [100_000] }, 1, 3 * 86_400_000)).toBe(100_000_000);
  });
});
