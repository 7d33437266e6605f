import { SEND_AT_MAX_AHEAD_MS, SendAtText, parseSendAt, releaseAtMs, sendAtProblem } from './send-at';

describe('parseSendAt', () => {
  it('reads RFC 3339 date-times with Z or an offset', () => {
    expect(parseSendAt('2026-03-01T09:30:00Z')).toBe(Date.UTC(2026, 2, 1, 9, 30));
    expect(parseSendAt('2026-03-01t09:30:00z')).toBe(Date.UTC(2026, 2, 1, 9, 30));
    expect(parseSendAt('2026-03-01T10:30:00+01:00')).toBe(Date.UTC(2026, 2, 1, 9, 30));
    expect(parseSendAt('2026-03-01T04:00:00-05:30')).toBe(Date.UTC(2026, 2, 1, 9, 30));
    expect(parseSendAt('2026-03-01 09:30:00.250Z')).toBe(Date.UTC(2026, 2, 1, 9, 30, 0, 250));
    expect(parseSendAt('2026-03-01T09:30:00.123456789Z')).toBe(Date.UTC(2026, 2, 1, 9, 30, 0, 123));
    expect(parseSendAt('2024-02-29T00:00:00Z')).toBe(Date.UTC(2024, 1, 29));
  });

  it('refuses what is not one', () => {
    for (const bad of [
      '',
      '2026-03-01',
      '2026-03-01T09:30:00',
      '2026-03-01T09:30Z',
      '2026-02-30T09:30:00Z',
      '2025-02-29T09:30:00Z',
      '2026-13-01T09:30:00Z',
      '2026-03-01T24:00:00Z',
      '2026-03-01T09:60:00Z',
      '2026-03-01T09:30:00+24:00',
      '2026-03-01T09:30:00+0100',
      'tomorrow',
      '1767225600',
      `2026-03-01T09:30:00.${'1'.repeat(40)}Z`,
    ]) {
      expect(parseSendAt(bad)).toBeNull();
    }
  });
});

describe('sendAtProblem', () => {
  const now = Date.UTC(2026, 0, 1);
  it('accepts the past, now and up to 7 days ahead', () => {
    expect(sendAtProblem(now - 86_400_000, now)).toBeNull();
    expect(sendAtProblem(now, now)).toBeNull();
    expect(sendAtProblem(now + SEND_AT_MAX_AHEAD_MS, now)).toBeNull();
  });
  it('refuses more than 7 days ahead', () => {
    expect(sendAtProblem(now + SEND_AT_MAX_AHEAD_MS + 1, now)).toBe(SendAtText.tooFar);
  });
});

describe('releaseAtMs', () => {
  const now = Date.UTC(2026, 0, 1);
  it('is now (null) when absent, past or present', () => {
    expect(releaseAtMs(undefined, now)).toBeNull();
    expect(releaseAtMs(new Date(now - 1).toISOString(), now)).toBeNull();
    expect(releaseAtMs(new Date(now).toISOString(), now)).toBeNull();
  });
  it('is the instant when ahead', () => {
    expect(releaseAtMs(new Date(now + 1500).toISOString(), now)).toBe(now + 1500);
  });
});
