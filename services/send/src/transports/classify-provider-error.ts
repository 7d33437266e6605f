/**
 * Classifies what a provider API client (libs/providers: Gmail API, Microsoft Graph) threw while
 * sending into the send service's DeliveryFailure, the way classify-smtp-error.ts does for SMTP:
 *
 * - ProviderThrottledError (429, 5xx, usage limits, no answer; a busy token endpoint):
 *   `temporary`, retried like a 4xx SMTP reply while the attempt budget lasts, not before the
 *   provider's Retry-After (`retryAfterMs`, retry-delay.ts).
 * - OAuthRevokedError (invalid_grant, revoked consent): `auth`, final, the mailer is deactivated
 *   with `oauth_revoked` (by the token source already, libs/providers access-tokens.ts).
 * - ProviderAuthError (a fresh token refused, 403 for the account): `auth`, final, the consumer
 *   deactivates the mailer with `provider_auth_error`.
 * - ProviderRequestError (the provider refused this message: 400, 404 thread, 413, send-as
 *   denied): `permanent`, final.
 * - OAuthAppRejectedError (the provider refused the OAuth app's client id/secret at refresh):
 *   `temporary`: the operator or tenant fixes the app; the mailer is not deactivated.
 * - OAuthGrantNotFoundError (the mailer lost its grant: deleted meanwhile): `permanent`.
 * - Anything else: `temporary` (as unknown SMTP errors without a reply).
 *
 * `failedReason` is a readable mapping; `providerError` the provider's own text (no tokens:
 * the clients never put them in messages).
 */
import {
  OAuthAppRejectedError,
  OAuthGrantNotFoundError,
  OAuthRevokedError,
  ProviderAuthError,
  ProviderRequestError,
  ProviderThrottledError,
} from '@mailyard/providers';
import { AUTH_REASON_PREFIX, type DeliveryFailure } from '@mailyard/providers';

export interface SendContext {
  /** "Gmail API" or "Microsoft Graph". */
  provider: string;
  /** The Gmail thread the send asked for, if any. */
  threadId?: string;
}

/** The failed_reason of an OAuth mailer that has no grant (deleted meanwhile, or never connected). */
export const NO_GRANT_REASON = 'Mailer configuration could not be loaded: the mailer has no OAuth grant';

/** The failed_reason of a revoked grant (the consumer knows a recorded one by it). */
export const OAUTH_REVOKED_REASON = `${AUTH_REASON_PREFIX} failed: the OAuth grant of the mailer was revoked or has expired; the mailer was deactivated, sign in again (POST /v1/oauth/login with its mailer_id) to reactivate it`;

export function classifyProviderError(err: unknown, ctx: SendContext): DeliveryFailure {
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof OAuthRevokedError)
    return {
      kind: 'auth',
      failedReason: OAUTH_REVOKED_REASON,
      providerError: message,
      deactivation: 'oauth_revoked',
    };
  if (err instanceof ProviderAuthError)
    return {
      kind: 'auth',
      failedReason: `${AUTH_REASON_PREFIX} failed: ${ctx.provider} refused the mailer's access (${err.status}); the mailer was deactivated, sign in again with the mail scopes to reactivate it`,
      providerError: message,
      deactivation: 'provider_auth_error',
    };
  if (err instanceof OAuthAppRejectedError)
    return {
      kind: 'temporary',
      failedReason:
        'Temporary failure: the provider refused the OAuth app of the mailer (client_id / client_secret)',
      providerError: message,
    };
  if (err instanceof OAuthGrantNotFoundError)
    return {
      kind: 'permanent',
      failedReason: NO_GRANT_REASON,
      providerError: '',
    };
  if (err instanceof ProviderThrottledError) {
    const what =
      err.status === null
        ? `${ctx.provider} did not answer`
        : err.status === 429 || err.status === 403
          ? `${ctx.provider} is rate limiting the mailer`
          : `${ctx.provider} is unavailable`;
    const after = err.retryAfterMs !== null ? ` (retry after ${Math.ceil(err.retryAfterMs / 1000)} s)` : '';
    return {
      kind: 'temporary',
      failedReason: `Temporary failure: ${what}${after}`,
      providerError: message,
      ...(err.retryAfterMs !== null ? { retryAfterMs: err.retryAfterMs } : {}),
    };
  }
  if (err instanceof ProviderRequestError)
    return { kind: 'permanent', failedReason: requestReason(err, ctx), providerError: message };
  return { kind: 'temporary', failedReason: `${ctx.provider} request failed`, providerError: message };
}

function requestReason(err: ProviderRequestError, ctx: SendContext): string {
  if (err.status === 404 && ctx.threadId) return `Gmail thread ${ctx.threadId} (Thread-Id) was not found`;
  if (err.status === 413) return `Message too large for ${ctx.provider}`;
  if (err.reason === 'ErrorSendAsDenied') return 'The mailer may not send as the message From address';
  if (err.status === 400) return `${ctx.provider} refused the message as invalid`;
  return `${ctx.provider} refused the message (${err.status})`;
}
