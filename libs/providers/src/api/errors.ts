/**
 * Errors of the provider API clients besides the two of the OAuth seam (oauth/types.ts:
 * OAuthRevokedError from the token source, ProviderThrottledError for 429/5xx). Messages carry
 * the provider's own error text and status, never a token or a request header.
 */

/**
 * The provider refused the account's access even with a freshly issued token (a second 401), or
 * answered 403 for the account (missing scope, API disabled for the domain): only the mailer's
 * owner can fix it. Senders treat it as an authentication failure (`provider_auth_error`).
 */
export class ProviderAuthError extends Error {
  override name = 'ProviderAuthError';
  readonly code = 'EPROVIDERAUTH';
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

/**
 * The provider refused this request for good (400 malformed MIME, 404 unknown message, 413 too
 * large, ...): retrying the same request will not help. `reason` is the provider's error code
 * (Gmail `errors[0].reason`, Graph `error.code`), '' when it gave none.
 */
export class ProviderRequestError extends Error {
  override name = 'ProviderRequestError';
  readonly code = 'EPROVIDERREQUEST';
  constructor(
    message: string,
    readonly status: number,
    readonly reason: string,
  ) {
    super(message);
  }
}
