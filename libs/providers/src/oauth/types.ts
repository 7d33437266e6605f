/**
 * The seam between OAuth token handling and the provider API clients (Gmail API, Microsoft
 * Graph). Token exchange, refresh ahead of expiry and revocation live in `oauth/`; the API
 * clients in `gmail/` and `graph/` only ever ask an AccessTokenSource for a bearer token, so
 * neither side knows how the other is built and tests can give the clients a token issued by
 * a local stand-in.
 */

/** Whose OAuth service and API the mailer uses. */
export type OAuthProvider = 'google' | 'microsoft';

/** Where the provider endpoints are (docs/configuration.md "OAuth providers (gateway, send, imap-backfill)"); tests point them at stand-ins. */
export interface ProviderEndpoints {
  /** GOOGLE_OAUTH_URL: authorize + token (+ userinfo / revoke) base. */
  googleOAuthUrl: string;
  /** GMAIL_API_URL: the googleapis rootUrl for the Gmail API. */
  gmailApiUrl: string;
  /** MICROSOFT_LOGIN_URL: the identity platform base (authority host). */
  microsoftLoginUrl: string;
  /** MICROSOFT_GRAPH_URL: the Graph base (without /v1.0). */
  microsoftGraphUrl: string;
}

export const PUBLIC_PROVIDER_ENDPOINTS: ProviderEndpoints = Object.freeze({
  googleOAuthUrl: 'https://oauth2.googleapis.com',
  gmailApiUrl: 'https://gmail.googleapis.com/',
  microsoftLoginUrl: 'https://login.microsoftonline.com',
  microsoftGraphUrl: 'https://graph.microsoft.com',
});

/**
 * Gives a currently valid bearer token for one mailer's account, refreshing it when it is about
 * to expire. Throws OAuthRevokedError when the grant is gone (invalid_grant, revoked, consent
 * withdrawn): the caller deactivates the mailer with `failed_reason: oauth_revoked`.
 */
export type AccessTokenSource = () => Promise<string>;

/** The grant was revoked or expired for good; only re-authentication brings the mailer back. */
export class OAuthRevokedError extends Error {
  override name = 'OAuthRevokedError';
  readonly code = 'EOAUTHREVOKED';
}

/**
 * A provider API answered 429 or 5xx (or the connection failed): retry later, after
 * `retryAfterMs` when the provider said (Retry-After).
 */
export class ProviderThrottledError extends Error {
  override name = 'ProviderThrottledError';
  readonly code = 'EPROVIDERBUSY';
  constructor(
    message: string,
    readonly status: number | null,
    readonly retryAfterMs: number | null,
  ) {
    super(message);
  }
}
