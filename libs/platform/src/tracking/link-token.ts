/**
 * Signed tracking links (docs/architecture.md, security 4: no open redirect, no forged events).
 *
 * The send service signs, the tracking service verifies; both derive the same key from
 * SECRET_KEY (`linkTokenKey`, HKDF-SHA256 with its own `info`, so the sealing key itself is never
 * used for links). It lives in libs/platform, beside the sealer, because it needs that secret;
 * the module itself is pure (node:crypto only, no I/O).
 *
 * Token = base64url(JSON claims) "." base64url(HMAC-SHA256(key, "mlt1." + base64url(claims))).
 * The claims carry everything a tracking hit needs without trusting the request: the kind
 * (open, click, unsubscribe), tenant, ref_id, the recipient's email_logs row id and address, and
 * for clicks the exact original URL (so the redirect target is signed too). The MAC is compared
 * in constant time; anything malformed, truncated, oversized or signed with another key is
 * simply "not a token" (null), which the tracking service answers with 404.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Sealer } from '../secrets/sealer';

export type LinkKind = 'open' | 'click' | 'unsubscribe';

export interface LinkClaims {
  kind: LinkKind;
  tenantId: string;
  refId: string;
  /** The recipient's email_logs row (id is a ULID, stable when a row moves to a split copy). */
  logId: string;
  email: string;
  /** Clicks only: the exact original URL (HTML entities already decoded). */
  url?: string;
}

/** Tokens longer than this are refused before any work (a click URL may be long, not unbounded). */
export const MAX_TOKEN_LENGTH = 16 * 1024;

const VERSION = 1;
const MAC_PREFIX = 'mlt1.';
const KIND_CODES: Record<LinkKind, string> = { open: 'o', click: 'c', unsubscribe: 'u' };
const KINDS_BY_CODE: Record<string, LinkKind> = { o: 'open', c: 'click', u: 'unsubscribe' };

/** The link signing key: HKDF of SECRET_KEY with a purpose of its own. */
export function linkTokenKey(sealer: Sealer): Buffer {
  return sealer.deriveKey('mailyard tracking link token v1');
}

function mac(key: Buffer, encodedClaims: string): Buffer {
  return createHmac('sha256', key).update(MAC_PREFIX).update(encodedClaims).digest();
}

export function signLinkToken(key: Buffer, claims: LinkClaims): string {
  const body: unknown[] = [
    VERSION,
    KIND_CODES[claims.kind],
    claims.tenantId,
    claims.refId,
    claims.logId,
    claims.email,
  ];
  if (claims.kind === 'click') body.push(claims.url ?? '');
  const encoded = Buffer.from(JSON.stringify(body), 'utf8').toString('base64url');
  return `${encoded}.${mac(key, encoded).toString('base64url')}`;
}

/** A token's shape: the encoded claims, a dot, the 43-character MAC; anything else is no token. */
const TOKEN = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{43})$/;

/** The claims of a token signed with `key`, or null for anything else. */
export function verifyLinkToken(key: Buffer, token: string): LinkClaims | null {
  if (token.length > MAX_TOKEN_LENGTH) return null;
  const parts = TOKEN.exec(token);
  if (!parts) return null;
  const [, encoded, sig] = parts as unknown as [string, string, string];
  // 43 base64url characters are always 32 bytes: the lengths compared are equal.
  if (!timingSafeEqual(Buffer.from(sig, 'base64url'), mac(key, encoded))) return null;
  return parseClaims(encoded);
}

function parseClaims(encoded: string): LinkClaims | null {
  let body: unknown;
  try {
    body = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  if (!Array.isArray(body) || body[0] !== VERSION) return null;
  const kind = KINDS_BY_CODE[String(body[1])];
  if (!kind || body.length !== (kind === 'click' ? 7 : 6)) return null;
  const fields = body.slice(2);
  if (!fields.every((f) => typeof f === 'string')) return null;
  const [tenantId, refId, logId, email, url] = fields as string[];
  if (!tenantId || !refId || !logId || !email) return null;
  const claims: LinkClaims = { kind, tenantId, refId, logId, email };
  if (kind === 'click') {
    if (!url) return null;
    claims.url = url;
  }
  return claims;
}

/** Paths of the tracking service, relative to TRACKING_BASE_URL. */
export const TrackingPath = {
  open: (token: string) => `/o/${token}`,
  click: (token: string) => `/c/${token}`,
  unsubscribe: (token: string) => `/u/${token}`,
  /** Where SparkPost's webhook posts a SparkPost mailer's event batches (HTTP Basic auth). */
  sparkPostCallback: (mailerId: string) => `/callbacks/sparkpost/${encodeURIComponent(mailerId)}`,
} as const;

/** TRACKING_BASE_URL without a trailing slash, or `http://127.0.0.1:<TRACKING_PORT>` when unset. */
export function trackingBaseUrl(config: { TRACKING_BASE_URL?: string; TRACKING_PORT: number }): string {
  const base = config.TRACKING_BASE_URL ?? `http://127.0.0.1:${config.TRACKING_PORT}`;
  return base.replace(/\/+$/, '');
}
