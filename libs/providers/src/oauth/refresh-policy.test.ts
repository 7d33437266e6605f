import { tokenFreshness } from './refresh-policy';

const NOW = Date.UTC(2026, 0, 5, 10, 0, 0);
const AHEAD = 300_000;
const at = (ms: number) => ({ accessToken: 'ya29.x', accessExpiresAt: new Date(NOW + ms) });

describe('refresh ahead of expiry', () => {
  it('uses a token with more than the margin left', () => {
    expect(tokenFreshness(at(AHEAD + 1), NOW, AHEAD)).toBe('fresh');
    expect(tokenFreshness(at(3600_000), NOW, AHEAD)).toBe('fresh');
  });

  it('refreshes within the margin while the token still works', () => {
    expect(tokenFreshness(at(AHEAD), NOW, AHEAD)).toBe('expiring');
    expect(tokenFreshness(at(1), NOW, AHEAD)).toBe('expiring');
  });

  it('must refresh an expired or absent token', () => {
    expect(tokenFreshness(at(0), NOW, AHEAD)).toBe('expired');
    expect(tokenFreshness(at(-1000), NOW, AHEAD)).toBe('expired');
    expect(tokenFreshness({ accessToken: null, accessExpiresAt: new Date(NOW + 3600_000) }, NOW, AHEAD)).toBe(
      'expired',
    );
    expect(tokenFreshness({ accessToken: 'x', accessExpiresAt: null }, NOW, AHEAD)).toBe('expired');
  });

  it('with no margin, refreshes only at expiry', () => {
    expect(tokenFreshness(at(1), NOW, 0)).toBe('fresh');
    expect(tokenFreshness(at(0), NOW, 0)).toBe('expired');
  });

  it('a token the provider refused is expired whatever its stored expiry; another token is judged as usual', () => {
    expect(tokenFreshness(at(3600_000), NOW, AHEAD, 'ya29.x')).toBe('expired');
    expect(tokenFreshness(at(3600_000), NOW, AHEAD, 'ya29.older')).toBe('fresh');
    expect(tokenFreshness(at(AHEAD), NOW, AHEAD, 'ya29.older')).toBe('expiring');
  });
});
