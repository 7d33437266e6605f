/**
 * What the API answers when a provider refuses or fails during login or callback:
 *
 * | error                    | status | text                                              |
 * |--------------------------|--------|---------------------------------------------------|
 * | OAuthRevokedError        | 400    | grantRejected (code) / tokenRejected (refresh token) |
 * | OAuthRequestError        | 400    | grantRejected, `details` = the provider's error   |
 * | OAuthAppRejectedError    | 422    | appRejected (client id / secret refused)          |
 * | ProviderThrottledError   | 503    | providerBusy, Retry-After when the provider said  |
 *
 * Anything else is not a provider answer: it propagates (500, logged).
 */
import { OAuthErrorText } from '@mailyard/contracts';
import { HttpError } from '@mailyard/platform';
import {
  OAuthAppRejectedError,
  OAuthRequestError,
  OAuthRevokedError,
  ProviderThrottledError,
} from '@mailyard/providers';

export function providerHttpError(err: unknown, during: 'code' | 'token'): unknown {
  if (err instanceof OAuthRevokedError)
    return new HttpError(
      400,
      during === 'code' ? OAuthErrorText.grantRejected : OAuthErrorText.tokenRejected,
      {
        details: err.message,
      },
    );
  if (err instanceof OAuthRequestError)
    return new HttpError(400, OAuthErrorText.grantRejected, { details: err.message });
  if (err instanceof OAuthAppRejectedError)
    return new HttpError(422, OAuthErrorText.appRejected, { details: err.message });
  if (err instanceof ProviderThrottledError) {
    const headers: Record<string, string> =
      err.retryAfterMs !== null ? { 'Retry-After': String(Math.ceil(err.retryAfterMs / 1000)) } : {};
    return new HttpError(
      503,
      err.status === null ? OAuthErrorText.providerFailed : OAuthErrorText.providerBusy,
      {
        headers,
      },
    );
  }
  return err;
}
