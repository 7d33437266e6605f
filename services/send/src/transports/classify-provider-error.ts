/**
 * Classifies what a provider API client (libs/providers: Gmail API, Microsoft Graph) threw while
 * sending into the send service's DeliveryFailure, the way classify-smtp-error.ts does for SMTP:
 *
 * - ProviderThrottledError (429, 5xx, usage limits, no answer): `temporary`, retried like a 4xx
 *   SMTP reply while the attempt budget lasts.
 * - OAuthRevokedError (invalid_grant, revoked consent): `auth`, final, the mailer is deactivated
 *   with `oauth_revoked`.
 * - ProviderAuthError (a fresh token refused, 403 for the account): `auth`, final,
 *   `provider_auth_error`.
 * - ProviderRequestError (the provider refused this message: 400, 404 thread, 413, send-as
 *   denied): `permanent`, final.
 * - Anything else: `temporary` (as unknown SMTP errors without a reply).
 *
 * `failedReason` is a readable mapping; `providerError` the provider's own text (no tokens:
 * the clients never put them in messages).
 */
import {
  OAuthRevokedError,
  ProviderAuthError,
  ProviderRequestError,
  ProviderThrottledError,
} from '@mailyard/providers';
import { AUTH_REASON_PREFIX, type DeliveryFailure } from '../classify-smtp-error';

export interface SendContext {
  /** "Gmail API" or "Microsoft Graph". */
  provider: string;
  /** The Gmail thread the send asked for, if any. */
  threadId?: string;
}

export function classifyProviderError(err: unknown, ctx: SendContext): DeliveryFailure {
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof OAuthRevokedError)
    return {
      kind: 'auth',
      failedReason: `${AUTH_REASON_PREFIX} failed: the OAuth grant of the mailer was revoked or has expired; sign in again to reactivate it`,
      providerError: message,
      deactivation: 'oauth_revoked',
    };
  if (err instanceof ProviderAuthError)
    return {
      kind: 'auth',
      failedReason: `${AUTH_REASON_PREFIX} failed: ${ctx.provider} refused the mailer's access (${err.status}); sign in again with the mail scopes`,
      providerError: message,
      deactivation: 'provider_auth_error',
    };
  if (err instanceof ProviderThrottledError) {
    const what =
      err.status === null
        ? `${ctx.provider} did not answer`
        : err.status === 429 || err.status === 403
          ? `${ctx.provider} is rate limiting the mailer`
          : `${ctx.provider} is unavailable`;
    const after = err.retryAfterMs !== null ? ` (retry after ${Math.ceil(err.retryAfterMs / 1000)} s)` : '';
    return { kind: 'temporary', failedReason: `Temporary failure: ${what}${after}`, providerError: message };
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
