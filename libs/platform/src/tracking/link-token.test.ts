import { createHmac, randomBytes } from 'node:crypto';
import { Sealer } from '../secrets/sealer';
import {
  type LinkClaims,
  MAX_TOKEN_LENGTH,
  linkTokenKey,
  signLinkToken,
  trackingBaseUrl,
  verifyLinkToken,
} from './link-token';

const key = randomBytes(32);
const click: LinkClaims = {
  kind: 'click',
  tenantId: 'tenant_1',
  refId: '01JABCDEF',
  logId: '01JLOG',
  email: 'reader@example.com',
  url: 'https://shop.example/wp-login.php?action=rp&key=a1b2&login=ada&_wpnonce=9f&sig=x%2By',
};

/**
 * A token with the right MAC over any text (the file comment's layout): what only a holder of the
 * key can make, so these bodies test the claims check behind the MAC.
 */
function signedText(text: string): string {
  const encoded = Buffer.from(text, 'utf8').toString('base64url');
  return `${encoded}.${createHmac('sha256', key).update('mlt1.').update(encoded).digest('base64url')}`;
}
const signedBody = (body: unknown) => signedText(JSON.stringify(body));

describe('link tokens', () => {
  it('keeps the token of a known key and claims (links in mail already sent stay valid)', () => {
    const known = linkTokenKey(new Sealer(Buffer.alloc(32, 1)));
    expect(known.toString('hex')).toBe('f34faf189c10ca8a4c068e530ff9949841dc27a6a6c82ebd1da4f7422bf7c518');
    const claims: LinkClaims = {
      kind: 'open',
      tenantId: 'tenant_1',
      refId: '01JREF',
      logId: '01JLOG',
      email: 'a@example.com',
    };
    const token =
      'WzEsIm8iLCJ0ZW5hbnRfMSIsIjAxSlJFRiIsIjAxSkxPRyIsImFAZXhhbXBsZS5jb20iXQ.oySJdYxqjW9qZTN_FNP899WMmWx4Zqbnbk8luq8ac38';
    expect(signLinkToken(known, claims)).toBe(token);
    expect(verifyLinkToken(known, token)).toEqual(claims);
  });

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
      `${token}x`,
      `x.${token}`,
      ` ${token}`,
      `${token}\n`,
      `${token.split('.')[0]}.${token.split('.')[1]!.slice(0, 42)}=`,
      `${token.split('.')[0]}+.${token.split('.')[1]}`,
      '',
      '.',
      'a.b',
      `.${'A'.repeat(43)}`,
      `${'A'.repeat(20000)}.${'A'.repeat(43)}`,
    ]) {
      expect(verifyLinkToken(key, bad)).toBeNull();
    }
  });

  it('refuses a correctly signed token longer than MAX_TOKEN_LENGTH, and takes one of exactly that length', () => {
    // The token is 44 characters (dot and MAC) longer than the encoded claims, 4 per 3 bytes.
    const overhead = signLinkToken(key, { ...click, url: '' }).length;
    const urlFor = (length: number) =>
      `${click.url}#${'x'.repeat(((length - overhead) * 3) / 4 - click.url!.length - 1)}`;
    const exact = { ...click, url: urlFor(MAX_TOKEN_LENGTH) };
    expect(signLinkToken(key, exact)).toHaveLength(MAX_TOKEN_LENGTH);
    expect(verifyLinkToken(key, signLinkToken(key, exact))).toEqual(exact);
    const longer = { ...click, url: urlFor(MAX_TOKEN_LENGTH + 4) };
    expect(signLinkToken(key, longer)).toHaveLength(MAX_TOKEN_LENGTH + 4);
    expect(verifyLinkToken(key, signLinkToken(key, longer))).toBeNull();
  });

  it('refuses correctly signed claims of the wrong shape', () => {
    const good = [1, 'o', 'tenant_1', '01JREF', '01JLOG', 'a@example.com'];
    expect(verifyLinkToken(key, signedBody(good))).toEqual({
      kind: 'open',
      tenantId: 'tenant_1',
      refId: '01JREF',
      logId: '01JLOG',
      email: 'a@example.com',
    });
    for (const bad of [
      { 0: 1, 1: 'o', 2: 't', 3: 'r', 4: 'l', 5: 'e', length: 6 },
      [2, ...good.slice(1)],
      ['1', ...good.slice(1)],
      [1, 'x', ...good.slice(2)],
      [1, 'open', ...good.slice(2)],
      [1, 'o', ...good.slice(2), 'https://extra.example/'],
      good.slice(0, 5),
      [1, 'c', ...good.slice(2)],
      [1, 'c', ...good.slice(2), ''],
      [1, 'c', ...good.slice(2), 7],
      [1, 'o', 'tenant_1', '01JREF', 5, 'a@example.com'],
      [1, 'u', '', '01JREF', '01JLOG', 'a@example.com'],
      [1, 'u', 'tenant_1', '', '01JLOG', 'a@example.com'],
      [1, 'u', 'tenant_1', '01JREF', '', 'a@example.com'],
      [1, 'u', 'tenant_1', '01JREF', '01JLOG', ''],
      null,
      'text',
    ])
      expect({ bad, claims: verifyLinkToken(key, signedBody(bad)) }).toEqual({ bad, claims: null });
    expect(verifyLinkToken(key, signedText('[1, "o", "tenant_1"'))).toBeNull();
  });

  it('a click signed without a URL is no valid token', () => {
    const { url: _u, ...noUrl } = click;
    expect(verifyLinkToken(key, signLinkToken(key, noUrl))).toBeNull();
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
    expect(trackingBaseUrl({ TRACKING_PORT: 3001, TRACKING_BASE_URL: 'https://t.example.com/t//' })).toBe(
      'https://t.example.com/t',
    );
  });
});
