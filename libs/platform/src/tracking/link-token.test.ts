import { randomBytes } from 'node:crypto';
import { Sealer } from '../secrets/sealer';
import { type LinkClaims, linkTokenKey, signLinkToken, trackingBaseUrl, verifyLinkToken } from './link-token';

const key = randomBytes(32);
const click: LinkClaims = {
  kind: 'click',
  tenantId: 'tenant_1',
  refId: '01JABCDEF',
  logId: '01JLOG',
  email: 'reader@example.com',
  url: 'https://shop.example/wp-login.php?action=rp&key=a1b2&login=ada&_wpnonce=9f&sig=x%2By',
};

describe('link tokens', () => {
  it('verifies what it signed, for every kind', () => {
    expect(verifyLinkToken(key, signLinkToken(key, click))).toEqual(click);
    const { url: _u, ...rest } = click;
    for (const kind of ['open', 'unsubscribe'] as const) {
      const claims = { ...rest, kind };
      expect(verifyLinkToken(key, signLinkToken(key, claims))).toEqual(claims);
    }
  });

  it('is URL-safe as a path segment', () => {
    expect(signLinkToken(key, click)).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
  });

  it('refuses a token signed with another key', () => {
    expect(verifyLinkToken(randomBytes(32), signLinkToken(key, click))).toBeNull();
  });

  it('refuses tampered claims (another redirect target) and a tampered MAC', () => {
    const token = signLinkToken(key, click);
    const [body, sig] = token.split('.') as [string, string];
    const forged = Buffer.from(
      Buffer.from(body, 'base64url').toString().replace('shop.example', 'evil.example'),
    ).toString('base64url');
    expect(verifyLinkToken(key, `${forged}.${sig}`)).toBeNull();
    const flipped = sig[0] === 'A' ? `B${sig.slice(1)}` : `A${sig.slice(1)}`;
    expect(verifyLinkToken(key, `${body}.${flipped}`)).toBeNull();
    // Another valid token's MAC does not fit these claims either.
    const other = signLinkToken(key, { ...click, email: 'someone@example.com' });
    expect(verifyLinkToken(key, `${body}.${other.split('.')[1]}`)).toBeNull();
  });

  it('refuses truncated and malformed tokens', () => {
    const token = signLinkToken(key, click);
    for (const bad of [
      token.slice(0, -1),
      token.slice(1),
      token.split('.')[0]!,
      `${token}.x`,
      '',
      '.',
      'a.b',
      `${'A'.repeat(20000)}.${'A'.repeat(43)}`,
    ]) {
      expect(verifyLinkToken(key, bad)).toBeNull();
    }
  });

  it('derives the same key from the same SECRET_KEY and different ones from different keys', () => {
    const secret = randomBytes(32);
    const a = linkTokenKey(new Sealer(secret));
    expect(linkTokenKey(new Sealer(Buffer.from(secret)))).toEqual(a);
    expect(a.equals(secret)).toBe(false);
    expect(linkTokenKey(new Sealer(randomBytes(32))).equals(a)).toBe(false);
  });

  it('defaults the base URL to the local tracking port', () => {
    expect(trackingBaseUrl({ TRACKING_PORT: 3001 })).toBe('http://127.0.0.1:3001');
    expect(trackingBaseUrl({ TRACKING_PORT: 3001, TRACKING_BASE_URL: 'https://t.example.com/' })).toBe(
      'https://t.example.com',
    );
  });
});
