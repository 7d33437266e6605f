import { loadConfig } from '@mailyard/platform';
import { JITTER, nextRetryDelayMs, retryWindowMs, retryWindowS } from './schedule';
import { dispatcherSettings } from './settings';

const DEFAULT = dispatcherSettings(loadConfig({})).retryDelaysS;

describe('nextRetryDelayMs', () => {
  it('follows the list, scaled by the jitter factor', () => {
    expect(nextRetryDelayMs(1, DEFAULT, () => 0.5)).toBe(5000);
    expect(nextRetryDelayMs(2, DEFAULT, () => 0)).toBe(30000 * (1 - JITTER));
    expect(nextRetryDelayMs(3, DEFAULT, () => 0.999999)).toBeCloseTo(120000 * (1 + JITTER), -2);
  });

  it('gives up when the list is used up', () => {
    expect(nextRetryDelayMs(10, DEFAULT, () => 0.5)).toBe(30000000);
    expect(nextRetryDelayMs(11, DEFAULT, () => 0.5)).toBeNull();
    expect(nextRetryDelayMs(1, [], () => 0.5)).toBeNull();
  });

  it('spreads retries that failed together', () => {
    const delays = new Set(Array.from({ length: 50 }, () => nextRetryDelayMs(4, DEFAULT)));
    expect(delays.size).toBeGreaterThan(10);
    for (const d of delays) {
      expect(d!).toBeGreaterThanOrEqual(600000 * (1 - JITTER));
      expect(d!).toBeLessThan(600000 * (1 + JITTER));
    }
  });

  it('the default schedule spans 24 hours', () => {
    expect(retryWindowS(DEFAULT)).toBeGreaterThanOrEqual(86400);
    expect(retryWindowS(DEFAULT)).toBeLessThan(90000);
  });
});

describe('retryWindowMs', () => {
  it('covers every delay at its jitter maximum and every attempt timing out', () => {
    expect(retryWindowMs([1, 2], 1000)).toBe(3 * 1000 * (1 + JITTER) + 3 * 1000);
    expect(retryWindowMs(DEFAULT, 5000)).toBeGreaterThan(24 * 3600 * 1000);
  });
});
