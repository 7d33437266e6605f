/**
 * The OAuth `state` parameter (docs/architecture.md, security 1): the callback is reached without an API key,
 * by the user's browser coming back from the provider, so the state itself says whose login it
 * is: tenant, app, mailer type, the mailer to update (if any), the redirect URI used, a nonce and
 * an expiry. It is signed with HMAC-SHA256 under a key derived from SECRET_KEY and checked with a
 * timing-safe compare; a changed byte, another key or a passed expiry makes it invalid. The state
 * is signed, not encrypted: it holds no secret (the PKCE verifier stays server-side, keyed by the
 * nonce, which also makes each state usable once).
 *
 * Layout: base64url(JSON payload) "." base64url(HMAC(key, "mailyard-oauth-state.v1." + payload)).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { OAUTH_MAILER_TYPES, type OAuthMailerType } from '@mailyard/contracts';
import { z } from 'zod';

export interface OAuthState {
  tenantId: string;
  appId: string;
  type: OAuthMailerType;
  /** The mailer a re-authentication updates; absent for a new mailer. */
  mailerId?: string;
  redirectUri: string;
  nonce: string;
  /** Unix seconds. */
  expiresAt: number;
}

const Payload = z
  .object({
    v: z.literal(1),
    t: z.string().min(1).max(200),
    a: z.string().min(1).max(200),
    y: z.enum(OAUTH_MAILER_TYPES),
    m: z.string().min(1).max(200).optional(),
    r: z.string().min(1).max(2048),
    n: z.string().regex(/^[A-Za-z0-9_-]{16,64}$/),
    e: z.number().int().positive(),
  })
  .strict();

const CONTEXT = 'mailyard-oauth-state.v1.';
/** Longest state accepted for checking (a real one is well under 1 KB). */
const MAX_STATE_CHARS = 4096;

export type StateCheck =
  | { ok: true; state: OAuthState }
  | { ok: false; reason: 'malformed' | 'signature' | 'expired' };

export class StateSigner {
  constructor(private readonly key: Buffer) {
    if (key.length < 32) throw new Error('state key must be at least 32 bytes');
  }

  /** A fresh nonce (also the key of the login's server-side record). */
  static nonce(): string {
    return randomBytes(18).toString('base64url');
  }

  sign(state: OAuthState): string {
    const payload = Buffer.from(
      JSON.stringify({
        v: 1,
        t: state.tenantId,
        a: state.appId,
        y: state.type,
        ...(state.mailerId ? { m: state.mailerId } : {}),
        r: state.redirectUri,
        n: state.nonce,
        e: state.expiresAt,
      }),
    ).toString('base64url');
    return `${payload}.${this.mac(payload).toString('base64url')}`;
  }

  verify(value: string, nowMs = Date.now()): StateCheck {
    if (typeof value !== 'string' || value.length > MAX_STATE_CHARS)
      return { ok: false, reason: 'malformed' };
    const parts = value.split('.');
    if (parts.length !== 2 || !parts[0] || !parts[1]) return { ok: false, reason: 'malformed' };
    const [payload, sig] = parts as [string, string];
    if (!/^[A-Za-z0-9_-]+$/.test(payload) || !/^[A-Za-z0-9_-]+$/.test(sig))
      return { ok: false, reason: 'malformed' };
    const expected = this.mac(payload);
    const given = Buffer.from(sig, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected))
      return { ok: false, reason: 'signature' };
    let parsed: z.infer<typeof Payload>;
    try {
      const r = Payload.safeParse(JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')));
      if (!r.success) return { ok: false, reason: 'malformed' };
      parsed = r.data;
    } catch {
      return { ok: false, reason: 'malformed' };
    }
    if (parsed.e * 1000 <= nowMs) return { ok: false, reason: 'expired' };
    return {
      ok: true,
      state: {
        tenantId: parsed.t,
        appId: parsed.a,
        type: parsed.y,
        ...(parsed.m ? { mailerId: parsed.m } : {}),
        redirectUri: parsed.r,
        nonce: parsed.n,
        expiresAt: parsed.e,
      },
    };
  }

  private mac(payload: string): Buffer {
    return createHmac('sha256', this.key).update(CONTEXT).update(payload).digest();
  }
}
