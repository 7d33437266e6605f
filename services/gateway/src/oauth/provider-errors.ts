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
 * Anything else is not a provider answer: it propagates (500, logged). What the error means is
 * decided once in libs/providers (classifyProviderFailure); this maps each kind to the answer.
 */
import { OAuthErrorText } from '@mailyard/contracts';
import { HttpError } from '@mailyard/platform';
import { classifyProviderFailure } from '@mailyard/providers';

export function providerHttpError(err: unknown, during: 'code' | 'token'): unknown {
  const failure = classifyProviderFailure(err);
  switch (failure?.kind) {
    case 'grant-revoked':
      return new HttpError(
        400,
        during === 'code' ? OAuthErrorText.grantRejected : OAuthErrorText.tokenRejected,
        { details: failure.message },
      );
    case 'request-invalid':
      return new HttpError(400, OAuthErrorText.grantRejected, { details: failure.message });
    case 'app-rejected':
      return new HttpError(422, OAuthErrorText.appRejected, { details: failure.message });
    case 'throttled': {
      const headers: Record<string, string> =
        failure.retryAfterMs !== null
          ? { 'Retry-After': String(Math.ceil(failure.retryAfterMs / 1000)) }
          : {};
      const text = failure.busy === 'no-answer' ? OAuthErrorText.providerFailed : OAuthErrorText.providerBusy;
      return new HttpError(503, text, { headers });
    }
    default:
      return err;
  }
}
