/**
 * Classifies what a googleapis Gmail call threw (a GaxiosError) for the retry policy
 * (api/call-policy.ts), after Google's "Resolve errors" guide for the Gmail API:
 *
 * - 401 (authError, invalid credentials): the token was refused.
 * - 429, 5xx, and 403 with a usage-limit reason (rateLimitExceeded, userRateLimitExceeded,
 *   dailyLimitExceeded, ...): busy, retry (after Retry-After when sent).
 * - Other 403 (insufficientPermissions, domainPolicy, forbidden): the account may not do this.
 * - Other statuses: ProviderRequestError with Google's message and reason.
 * - No HTTP answer (connection refused or reset, timeout): busy.
 *
 * Only the error body's message and reason are read: a GaxiosError also carries the request
 * (Authorization header included), which must never reach a log or an error message.
 */
import { type CallFailure, networkFailure } from '../api/call-policy';
import { ProviderRequestError } from '../api/errors';
import { parseRetryAfter } from '../api/retry-after';

const USAGE_LIMIT_REASONS = new Set([
  'rateLimitExceeded',
  'userRateLimitExceeded',
  'dailyLimitExceeded',
  'quotaExceeded',
  'concurrentLimitExceeded',
]);

interface GoogleErrorBody {
  error?: { code?: number; message?: string; status?: string; errors?: Array<{ reason?: string }> };
}

interface GaxiosLike {
  status?: number;
  code?: string | number;
  message?: string;
  response?: { status?: number; headers?: unknown; data?: unknown };
}

export function headerOf(headers: unknown, name: string): string | null {
  if (!headers || typeof headers !== 'object') return null;
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name);
  const key = Object.keys(headers).find((k) => k.toLowerCase() === name);
  const v = key === undefined ? undefined : (headers as Record<string, unknown>)[key];
  return typeof v === 'string' ? v : Array.isArray(v) ? String(v[0]) : null;
}

export function classifyGmailError(err: unknown): CallFailure {
  if (typeof err !== 'object' || err === null) return { kind: 'error', error: err };
  const e = err as GaxiosLike;
  const status = e.response?.status ?? (typeof e.status === 'number' ? e.status : undefined);
  if (!status) {
    const cause = (err as { cause?: { code?: unknown } }).cause;
    const code = e.code ?? cause?.code;
    const failure = networkFailure(code, 'no answer from the Gmail API');
    // A new error without the GaxiosError's request (and its Authorization header).
    return (
      failure ?? {
        kind: 'error',
        error: new Error(`Gmail API request failed: ${String(code ?? '')} ${e.message ?? ''}`.trim()),
      }
    );
  }
  const body = (e.response?.data ?? {}) as GoogleErrorBody;
  const reason = body.error?.errors?.[0]?.reason ?? '';
  const message = body.error?.message ?? `HTTP ${status}`;
  if (status === 401) return { kind: 'unauthorized', message };
  if (status === 429 || status >= 500 || (status === 403 && USAGE_LIMIT_REASONS.has(reason))) {
    const retryAfterMs = parseRetryAfter(headerOf(e.response?.headers, 'retry-after'));
    return { kind: 'busy', status, retryAfterMs, message: reason ? `${message} (${reason})` : message };
  }
  if (status === 403) return { kind: 'denied', status, message: reason ? `${message} (${reason})` : message };
  return {
    kind: 'error',
    error: new ProviderRequestError(`Gmail API ${status}: ${message}`, status, reason),
  };
}
