/**
 * What a token endpoint failure means (RFC 6749 section 5.2, and the providers' documented
 * extras), decided from the HTTP status, the `error` code and Retry-After only:
 *
 * - `revoked`: the grant is gone for good: `invalid_grant` (refresh token expired or revoked,
 *   password changed, consent withdrawn; or a used/expired authorization code), and Microsoft's
 *   `interaction_required`, `consent_required`, `login_required`. Only a new consent helps.
 * - `throttled`: try again later: 429, any 5xx, `temporarily_unavailable`, `server_error`,
 *   `slow_down`, or no answer at all; `retryAfterMs` from Retry-After (seconds or HTTP date).
 * - `app`: the app is refused (`invalid_client`, `unauthorized_client`, or a bare 401).
 * - `failed`: anything else.
 */
export type TokenFailureKind = 'revoked' | 'throttled' | 'app' | 'failed';

export interface TokenFailure {
  /** HTTP status; null when no response came back (connection refused, timeout). */
  status: number | null;
  error?: string | undefined;
  description?: string | undefined;
  retryAfter?: string | null | undefined;
}

export interface TokenFailureVerdict {
  kind: TokenFailureKind;
  /** `error: description`, trimmed; what logs and MAILER_DEACTIVATED's provider_error carry. */
  providerError: string;
  retryAfterMs: number | null;
}

const REVOKED = new Set(['invalid_grant', 'interaction_required', 'consent_required', 'login_required']);
const BUSY = new Set(['temporarily_unavailable', 'server_error', 'slow_down']);
const APP = new Set(['invalid_client', 'unauthorized_client']);
const MAX_RETRY_AFTER_MS = 24 * 3600_000;

/** Retry-After as milliseconds from `nowMs`: delta-seconds or an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(value: string | null | undefined, nowMs = Date.now()): number | null {
  if (!value) return null;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Math.min(Number(v) * 1000, MAX_RETRY_AFTER_MS);
  const at = Date.parse(v);
  if (Number.isNaN(at)) return null;
  return Math.min(Math.max(0, at - nowMs), MAX_RETRY_AFTER_MS);
}

export function classifyTokenFailure(f: TokenFailure, nowMs = Date.now()): TokenFailureVerdict {
  const error = (f.error ?? '').trim().toLowerCase();
  const providerError = [f.error?.trim(), f.description?.trim()].filter(Boolean).join(': ').slice(0, 1000);
  const retryAfterMs = parseRetryAfter(f.retryAfter, nowMs);
  const verdict = (kind: TokenFailureKind): TokenFailureVerdict => ({
    kind,
    providerError: providerError || (f.status === null ? 'no response' : `HTTP ${f.status}`),
    retryAfterMs: kind === 'throttled' ? retryAfterMs : null,
  });
  if (f.status === null || f.status === 429 || f.status >= 500 || BUSY.has(error))
    return verdict('throttled');
  if (REVOKED.has(error)) return verdict('revoked');
  if (APP.has(error) || (f.status === 401 && !error)) return verdict('app');
  return verdict('failed');
}
