import { parseRetryAfter } from './retry-after';

const NOW = Date.parse('2024-03-01T12:00:00Z');

describe('parseRetryAfter', () => {
  it('reads delay-seconds', () => {
    expect(parseRetryAfter('0', NOW)).toBe(0);
    expect(parseRetryAfter('1', NOW)).toBe(1000);
    expect(parseRetryAfter(' 120 ', NOW)).toBe(120_000);
  });

  it('reads an IMF-fixdate relative to now', () => {
    expect(parseRetryAfter('Fri, 01 Mar 2024 12:00:30 GMT', NOW)).toBe(30_000);
  });

  it('reads the obsolete RFC 850 and asctime dates as GMT', () => {
    expect(parseRetryAfter('Friday, 01-Mar-24 12:01:00 GMT', NOW)).toBe(60_000);
    expect(parseRetryAfter('Fri Mar  1 12:00:05 2024', NOW)).toBe(5_000);
  });

  it('is 0 for a date already past', () => {
    expect(parseRetryAfter('Fri, 01 Mar 2024 11:00:00 GMT', NOW)).toBe(0);
  });

  it('is null for a missing or unreadable value', () => {
    expect(parseRetryAfter(undefined, NOW)).toBeNull();
    expect(parseRetryAfter(null, NOW)).toBeNull();
    expect(parseRetryAfter('', NOW)).toBeNull();
    expect(parseRetryAfter('-5', NOW)).toBeNull();
    expect(parseRetryAfter('1.5', NOW)).toBeNull();
    expect(parseRetryAfter('soon', NOW)).toBeNull();
    expect(parseRetryAfter('2024-03-01T12:00:30Z', NOW)).toBeNull();
  });
});
