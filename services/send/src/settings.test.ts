import { configFrom } from '@mailyard/platform';
import { retryDelayMs, sendSettings } from './settings';

describe('retryDelayMs', () => {
  const s = { retryDelaysS: [60, 300, 1800, 7200] };

  it('waits SEND_RETRY_DELAYS[attempt - 1] seconds before the next attempt', () => {
    expect([1, 2, 3, 4].map((attempt) => retryDelayMs(s, attempt))).toEqual([
      60_000, 300_000, 1_800_000, 7_200_000,
    ]);
  });

  it('repeats the last value when the list is shorter than the attempts', () => {
    expect([5, 6, 50].map((attempt) => retryDelayMs(s, attempt))).toEqual([7_200_000, 7_200_000, 7_200_000]);
    expect([1, 2, 3].map((attempt) => retryDelayMs({ retryDelaysS: [0.5, 1.5] }, attempt))).toEqual([
      500, 1500, 1500,
    ]);
  });

  it('takes fractions of seconds and zero as given', () => {
    expect(retryDelayMs({ retryDelaysS: [0.2] }, 1)).toBe(200);
    expect(retryDelayMs({ retryDelaysS: [0.0004] }, 1)).toBe(0);
    expect(retryDelayMs({ retryDelaysS: [0.0006] }, 1)).toBe(1);
    expect(retryDelayMs({ retryDelaysS: [0, 5] }, 1)).toBe(0);
    expect(retryDelayMs({ retryDelaysS: [0, 5] }, 2)).toBe(5000);
  });

  it('falls back to 60 s for an empty list', () => {
    expect(retryDelayMs({ retryDelaysS: [] }, 1)).toBe(60_000);
    expect(retryDelayMs({ retryDelaysS: [] }, 3)).toBe(60_000);
  });

  it('reads the list from SEND_RETRY_DELAYS (default 60,300,1800,7200)', () => {
    expect(sendSettings(configFrom({})).retryDelaysS).toEqual([60, 300, 1800, 7200]);
    const custom = sendSettings(configFrom({ SEND_RETRY_DELAYS: '1,2.5' }));
    expect([1, 2, 3].map((attempt) => retryDelayMs(custom, attempt))).toEqual([1000, 2500, 2500]);
  });
});
