/**
 * What a provider client's error means, decided once for every caller (the send service's
 * transports, the IMAP service's API mailboxes, the gateway's OAuth login). Each client
 * classifies its provider's raw answers into the error classes (Gmail gmail/gmail-errors.ts,
 * Graph graph/graph-http.ts, token endpoints oauth/classify-token-error.ts); this reads those
 * classes back as one tagged value, so services map a `kind` to their own outcome in a thin
 * switch and never test error classes themselves:
 *
 * - `grant-revoked` (OAuthRevokedError: invalid_grant, consent withdrawn, a deactivated mailer):
 *   the token source has already deactivated the mailer with `oauth_revoked`.
 * - `access-refused` (ProviderAuthError: a fresh token refused, 403 for the account): only the
 *   owner can fix it; callers deactivate with `provider_auth_error`.
 * - `app-rejected` (OAuthAppRejectedError: the app's client id / secret refused at refresh).
 * - `grant-missing` (OAuthGrantNotFoundError: the mailer has no grant, deleted meanwhile).
 * - `throttled` (ProviderThrottledError: 429, 5xx, usage limits, no answer), with why (`busy`:
 *   no answer, rate limited or unavailable) and the provider's Retry-After.
 * - `request-refused` (ProviderRequestError: the provider refused this request for good), with
 *   what it refused (`refusal`) from its status and reason code.
 * - `request-invalid` (OAuthRequestError: a token endpoint refused the request itself).
 * - null: not a provider answer (a database or broker error, a bug): callers keep their own rule.
 */
import { ProviderAuthError, ProviderRequestError } from './api/errors';
import { OAuthAppRejectedError, OAuthGrantNotFoundError, OAuthRequestError } from './oauth/errors';
import { OAuthRevokedError, ProviderThrottledError } from './oauth/types';

/** Why a provider could not take the request now. */
export type ProviderBusy = 'no-answer' | 'rate-limited' | 'unavailable';

/** What a provider refused for good. */
export type ProviderRefusal = 'not-found' | 'too-large' | 'send-as-denied' | 'invalid' | 'other';

export type ProviderFailure =
  | { kind: 'grant-revoked' | 'app-rejected' | 'grant-missing' | 'request-invalid'; message: string }
  | { kind: 'access-refused'; status: number; message: string }
  | {
      kind: 'throttled';
      busy: ProviderBusy;
      status: number | null;
      retryAfterMs: number | null;
      message: string;
    }
  | { kind: 'request-refused'; refusal: ProviderRefusal; status: number; message: string };

export function classifyProviderFailure(err: unknown): ProviderFailure | null {
  if (!(err instanceof Error)) return null;
  const { message } = err;
  if (err instanceof OAuthRevokedError) return { kind: 'grant-revoked', message };
  if (err instanceof ProviderAuthError) return { kind: 'access-refused', status: err.status, message };
  if (err instanceof OAuthAppRejectedError) return { kind: 'app-rejected', message };
  if (err instanceof OAuthGrantNotFoundError) return { kind: 'grant-missing', message };
  if (err instanceof OAuthRequestError) return { kind: 'request-invalid', message };
  if (err instanceof ProviderThrottledError)
    return {
      kind: 'throttled',
      busy: busyOf(err.status),
      status: err.status,
      retryAfterMs: err.retryAfterMs,
      message,
    };
  if (err instanceof ProviderRequestError)
    return { kind: 'request-refused', refusal: refusalOf(err), status: err.status, message };
  return null;
}

function busyOf(status: number | null): ProviderBusy {
  if (status === null) return 'no-answer';
  return status === 429 || status === 403 ? 'rate-limited' : 'unavailable';
}

function refusalOf(err: ProviderRequestError): ProviderRefusal {
  if (err.status === 413) return 'too-large';
  if (err.reason === 'ErrorSendAsDenied') return 'send-as-denied';
  if (err.status === 404) return 'not-found';
  if (err.status === 400) return 'invalid';
  return 'other';
}
