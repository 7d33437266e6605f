/**
 * Maps what a provider API client (libs/providers: Gmail API, Microsoft Graph) threw while
 * sending to the send service's DeliveryFailure, the way classify-smtp-error.ts does for SMTP.
 * What the error means is decided once in libs/providers (classifyProviderFailure); this only
 * words each kind for the send's failed_reason:
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
 * the clients never put them in messages). `bounceCategory` (docs/deliverability.md "Bounce
 * categories"): these APIs say nothing about the recipient's mailbox (a rejected recipient comes
 * back later as a bounce message, which the MX classifies), so a throttle is `rate_limited`, a
 * message too large `content`, another refusal or an unknown error `unknown`; the failures of the
 * mailer's own access or grant are not bounces and carry no category.
 */
import {
  AUTH_REASON_PREFIX,
  type DeliveryFailure,
  type ProviderFailure,
  classifyProviderFailure,
} from '@mailyard/providers';

export interface SendContext {
  /** "Gmail API" or "Microsoft Graph". */
  provider: string;
  /** The Gmail thread the send asked for, if any. */
  threadId?: string;
  /** How the owner reactivates a mailer whose access was refused (default: sign in again). */
  reauth?: string;
}

/** The failed_reason of an OAuth mailer that has no grant (deleted meanwhile, or never connected). */
export const NO_GRANT_REASON = 'Mailer configuration could not be loaded: the mailer has no OAuth grant';

/** The failed_reason of a revoked grant (the consumer knows a recorded one by it). */
export const OAUTH_REVOKED_REASON = `${AUTH_REASON_PREFIX} failed: the OAuth grant of the mailer was revoked or has expired; the mailer was deactivated, sign in again (POST /v1/oauth/login with its mailer_id) to reactivate it`;

export function classifyProviderError(err: unknown, ctx: SendContext): DeliveryFailure {
  const failure = classifyProviderFailure(err);
  const message = err instanceof Error ? err.message : String(err);
  switch (failure?.kind) {
    case 'grant-revoked':
      return {
        kind: 'auth',
        failedReason: OAUTH_REVOKED_REASON,
        providerError: message,
        deactivation: 'oauth_revoked',
      };
    case 'access-refused':
      return {
        kind: 'auth',
        failedReason: `${AUTH_REASON_PREFIX} failed: ${ctx.provider} refused the mailer's access (${failure.status}); the mailer was deactivated, ${ctx.reauth ?? 'sign in again with the mail scopes to reactivate it'}`,
        providerError: message,
        deactivation: 'provider_auth_error',
      };
    case 'app-rejected':
      return {
        kind: 'temporary',
        failedReason:
          'Temporary failure: the provider refused the OAuth app of the mailer (client_id / client_secret)',
        providerError: message,
      };
    case 'grant-missing':
      return { kind: 'permanent', failedReason: NO_GRANT_REASON, providerError: '' };
    case 'throttled':
      return throttledFailure(failure, ctx);
    case 'request-refused':
      return {
        kind: 'permanent',
        failedReason: refusalReason(failure, ctx),
        providerError: message,
        bounceCategory: failure.refusal === 'too-large' ? 'content' : 'unknown',
      };
    default:
      return {
        kind: 'temporary',
        failedReason: `${ctx.provider} request failed`,
        providerError: message,
        bounceCategory: 'unknown',
      };
  }
}

const BUSY_TEXT = {
  'no-answer': 'did not answer',
  'rate-limited': 'is rate limiting the mailer',
  unavailable: 'is unavailable',
} as const;

function throttledFailure(
  f: Extract<ProviderFailure, { kind: 'throttled' }>,
  ctx: SendContext,
): DeliveryFailure {
  const after = f.retryAfterMs !== null ? ` (retry after ${Math.ceil(f.retryAfterMs / 1000)} s)` : '';
  return {
    kind: 'temporary',
    failedReason: `Temporary failure: ${ctx.provider} ${BUSY_TEXT[f.busy]}${after}`,
    providerError: f.message,
    bounceCategory: 'rate_limited',
    ...(f.retryAfterMs !== null ? { retryAfterMs: f.retryAfterMs } : {}),
  };
}

function refusalReason(f: Extract<ProviderFailure, { kind: 'request-refused' }>, ctx: SendContext): string {
  if (f.refusal === 'not-found' && ctx.threadId)
    return `Gmail thread ${ctx.threadId} (Thread-Id) was not found`;
  if (f.refusal === 'too-large') return `Message too large for ${ctx.provider}`;
  if (f.refusal === 'send-as-denied') return 'The mailer may not send as the message From address';
  if (f.refusal === 'invalid') return `${ctx.provider} refused the message as invalid`;
  return `${ctx.provider} refused the message (${f.status})`;
}
