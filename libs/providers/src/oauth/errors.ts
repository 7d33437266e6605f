/**
 * How a failed call to a provider's token endpoint is reported (besides OAuthRevokedError and
 * ProviderThrottledError of the seam, types.ts):
 *
 * - OAuthAppRejectedError: the provider refused the app itself (`invalid_client`,
 *   `unauthorized_client`: wrong or expired client secret, app disabled). Not the user's doing:
 *   the mailer is NOT deactivated; the operator or tenant fixes the app.
 * - OAuthRequestError: any other refusal (`invalid_request`, `invalid_scope`, ...).
 *
 * `providerError` is the provider's `error: error_description` (never a token), safe to log and
 * to put in a MAILER_DEACTIVATED event.
 */
import { type TokenFailure, classifyTokenFailure } from './classify-token-error';
import { OAuthRevokedError, ProviderThrottledError } from './types';

export class OAuthAppRejectedError extends Error {
  override name = 'OAuthAppRejectedError';
  readonly code = 'EOAUTHAPP';
}

/** The mailer has no OAuth grant (unknown, deleted, or not an OAuth mailer). */
export class OAuthGrantNotFoundError extends Error {
  override name = 'OAuthGrantNotFoundError';
  readonly code = 'EOAUTHNOGRANT';
}

export class OAuthRequestError extends Error {
  override name = 'OAuthRequestError';
  readonly code = 'EOAUTHREQUEST';
  constructor(
    message: string,
    readonly status: number | null,
  ) {
    super(message);
  }
}

/** The error a token endpoint failure is reported as (see classify-token-error.ts). */
export function tokenError(f: TokenFailure): Error {
  const v = classifyTokenFailure(f);
  switch (v.kind) {
    case 'revoked':
      return new OAuthRevokedError(v.providerError);
    case 'throttled':
      return new ProviderThrottledError(v.providerError, f.status, v.retryAfterMs);
    case 'app':
      return new OAuthAppRejectedError(v.providerError);
    default:
      return new OAuthRequestError(v.providerError, f.status);
  }
}
