import { digestSecret, issueSecret, secretMatches } from './issued-secret';

describe('issued secrets', () => {
  it('issues distinct prefixed secrets of 256 bits', () => {
    const a = issueSecret('cb_');
    const b = issueSecret('cb_');
    expect(a).toMatch(/^cb_[A-Za-z0-9_-]{43}$/);
    expect(a).not.toBe(b);
  });

  it('matches only the secret whose digest is stored', () => {
    const secret = issueSecret();
    const stored = digestSecret(secret);
    expect(secretMatches(secret, stored)).toBe(true);
    expect(secretMatches(`${secret}x`, stored)).toBe(false);
    expect(secretMatches('', stored)).toBe(false);
    expect(secretMatches(secret, null)).toBe(false);
    expect(secretMatches(secret, stored.subarray(0, 16))).toBe(false);
  });
});
