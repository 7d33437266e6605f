/**
 * One interface over both providers' OAuth endpoints (google.ts with google-auth-library's
 * OAuth2Client, microsoft.ts with @azure/msal-node's ConfidentialClientApplication): the consent
 * URL, the authorization-code exchange (with the PKCE verifier) and the refresh-token exchange.
 * Both map failures the same way (classify-token-error.ts): OAuthRevokedError,
 * ProviderThrottledError, OAuthAppRejectedError, OAuthRequestError.
 */
import type { OAuthMailerType, OAuthProviderName } from '@mailyard/contracts';
import type { ProviderEndpoints } from './types';

/** The app a grant is made to: a tenant's (oauth_apps) or the deployment's (environment). */
export interface OAuthAppConfig {
  appId: string;
  provider: OAuthProviderName;
  clientId: string;
  clientSecret: string;
  redirectUri: string | null;
  /** Microsoft: the directory of the authority (default `common`). */
  directoryTenant: string | null;
  /** True for an oauth_apps row, false for a deployment app. */
  tenantApp: boolean;
}

/** What a token endpoint gave. */
export interface TokenGrant {
  accessToken: string;
  /** null when the provider did not send one (Google keeps the refresh token on refresh). */
  refreshToken: string | null;
  expiresAt: Date;
  /** Granted scopes; null when the response did not say. */
  scopes: string[] | null;
  /** The account's address from the id_token; null when none came with the response. */
  email: string | null;
}

export interface ConsentRequest {
  type: OAuthMailerType;
  redirectUri: string;
  state: string;
  codeChallenge: string;
  /** Prefills the account (a re-authentication). */
  loginHint?: string;
}

export interface OAuthClient {
  consentUrl(req: ConsentRequest): Promise<string>;
  exchangeCode(req: {
    type: OAuthMailerType;
    code: string;
    redirectUri: string;
    codeVerifier: string;
  }): Promise<TokenGrant>;
  refresh(req: { type: OAuthMailerType; refreshToken: string }): Promise<TokenGrant>;
}

export interface OAuthClientOptions {
  endpoints: ProviderEndpoints;
  /** Bound of one token-endpoint request. */
  timeoutMs: number;
}

export type OAuthClientFactory = (app: OAuthAppConfig) => OAuthClient;
