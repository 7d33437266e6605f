import { createHmac, randomBytes } from 'node:crypto';
import { type OAuthState, StateSigner } from './state';

const key = randomBytes(32);
const signer = new StateSigner(key);
const NOW = Date.UTC(2026, 0, 5, 10, 0, 0);
const state = (over: Partial<OAuthState> = {}): OAuthState => ({
  tenantId: 'tenant_01',
  appId: 'oauthapp_01',
  type: 'smtp_imap',
  redirectUri: 'https://api.example.com/v1/oauth/callback',
  nonce: StateSigner.nonce(),
  expiresAt: NOW / 1000 + 600,
  ...over,
});

/** Flips one character of the string at `i` to another base64url character. */
const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);

describe('OAuth state', () => {
  it('round-trips what it names: tenant, app, type, mailer, redirect URI, nonce, expiry', () => {
    const s = state({ mailerId: 'oauth_smtp_imap_01' });
    expect(signer.verify(signer.sign(s), NOW)).toEqual({ ok: true, state: s });
    const noMailer = state();
    const check = signer.verify(signer.sign(noMailer), NOW);
    expect(check).toEqual({ ok: true, state: noMailer });
    expect(check.ok && 'mailerId' in check.state).toBe(false);
  });

  it('is URL-safe', () => {
    expect(signer.sign(state())).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
  });

  it('expires: valid one second before, invalid at and after the expiry', () => {
    const s = state();
    const signed = signer.sign(s);
    expect(signer.verify(signed, s.expiresAt * 1000 - 1000).ok).toBe(true);
    expect(signer.verify(signed, s.expiresAt * 1000)).toEqual({ ok: false, reason: 'expired' });
    expect(signer.verify(signed, s.expiresAt * 1000 + 60_000)).toEqual({ ok: false, reason: 'expired' });
  });

  it('rejects any tampered byte of the payload or the signature', () => {
    const signed = signer.sign(state());
    const dot = signed.indexOf('.');
    for (const i of [0, 5, dot - 1, dot + 1, signed.length - 2]) {
      const r = signer.verify(flip(signed, i), NOW);
      expect(r.ok).toBe(false);
    }
    expect(signer.verify(flip(signed, 3), NOW)).toEqual({ ok: false, reason: 'signature' });
  });

  it('rejects a payload changed to name another tenant, even re-encoded cleanly', () => {
    const signed = signer.sign(state());
    const [payload, sig] = signed.split('.') as [string, string];
    const json = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    json.t = 'tenant_other';
    const forged = `${Buffer.from(JSON.stringify(json)).toString('base64url')}.${sig}`;
    expect(signer.verify(forged, NOW)).toEqual({ ok: false, reason: 'signature' });
  });

  it('rejects a state signed with another key', () => {
    const other = new StateSigner(randomBytes(32));
    expect(signer.verify(other.sign(state()), NOW)).toEqual({ ok: false, reason: 'signature' });
  });

  it('rejects malformed input without throwing, before checking any signature', () => {
    const payload = signer.sign(state()).split('.')[0]!;
    for (const bad of [
      '',
      '.',
      'abc',
      'a.b.c',
      `${payload}.AAAA.AAAA`,
      '.abc',
      'abc.',
      'e30.',
      'a b.c',
      'a.b c',
      'a+b.c',
      'a.b/c',
      ' a.b',
      'a.b ',
      `${'a'.repeat(5000)}.b`,
      `${'a'.repeat(4000)}.${'b'.repeat(96)}`,
    ])
      expect({ bad, check: signer.verify(bad, NOW) }).toEqual({
        bad,
        check: { ok: false, reason: 'malformed' },
      });
    for (const notText of [undefined, null, 7, ['a.b', 'c.d'], { state: 'a.b' }])
      expect(signer.verify(notText as unknown as string, NOW)).toEqual({ ok: false, reason: 'malformed' });
  });

  it('checks the signature of a well-formed state up to 4096 characters, of any signature length', () => {
    const payload = signer.sign(state()).split('.')[0]!;
    for (const unsigned of [
      `${'a'.repeat(4000)}.${'b'.repeat(95)}`,
      `${payload}.AAAA`,
      `${payload}.A`,
      'a.b',
    ])
      expect({ unsigned, check: signer.verify(unsigned, NOW) }).toEqual({
        unsigned,
        check: { ok: false, reason: 'signature' },
      });
  });

  it('rejects correctly signed payloads that are not the expected shape or not JSON', () => {
    const key2 = randomBytes(32);
    const s2 = new StateSigner(key2);
    const signedText = (text: string) => {
      const encoded = Buffer.from(text).toString('base64url');
      const mac = createHmac('sha256', key2)
        .update('mailyard-oauth-state.v1.')
        .update(encoded)
        .digest('base64url');
      return `${encoded}.${mac}`;
    };
    const good = JSON.parse(Buffer.from(s2.sign(state()).split('.')[0]!, 'base64url').toString());
    expect(s2.verify(signedText(JSON.stringify(good)), NOW).ok).toBe(true);
    for (const text of [
      JSON.stringify({ v: 2 }),
      JSON.stringify({ ...good, v: 2 }),
      JSON.stringify({ ...good, extra: 1 }),
      JSON.stringify({ ...good, t: '' }),
      JSON.stringify({ ...good, y: 'pop3' }),
      JSON.stringify({ ...good, n: 'short' }),
      JSON.stringify({ ...good, e: 1.5 }),
      '{"v":1,',
      'not json',
    ])
      expect({ text, check: s2.verify(signedText(text), NOW) }).toEqual({
        text,
        check: { ok: false, reason: 'malformed' },
      });
  });

  it('needs a key of at least 32 bytes', () => {
    expect(() => new StateSigner(randomBytes(31))).toThrow('state key must be at least 32 bytes');
    expect(() => new StateSigner(Buffer.alloc(0))).toThrow('state key must be at least 32 bytes');
    const s32 = new StateSigner(randomBytes(32));
    expect(s32.verify(s32.sign(state()), NOW).ok).toBe(true);
  });

  it('draws distinct nonces', () => {
    const nonces = new Set(Array.from({ length: 100 }, () => StateSigner.nonce()));
    expect(nonces.size).toBe(100);
  });
});
