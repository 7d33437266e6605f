/**
 * Google's OAuth endpoints through google-auth-library's OAuth2Client (the library googleapis
 * uses), with every endpoint derived from GOOGLE_OAUTH_URL (googleEndpoints): the consent URL
 * (access_type=offline, prompt=consent so a refresh token always comes back, PKCE S256), the
 * code exchange, the refresh, and the id_token check (signature against the provider's
 * certificates, audience = our client id, issuer accounts.google.com) that gives the account's
 * verified email. Failures become the seam's errors (errors.ts tokenError).
 */
import type { Credentials, OAuth2Client } from 'google-auth-library';
import { loadGoogleAuth } from '../lazy-sdks';
import type { OAuthAppConfig, OAuthClient, OAuthClientOptions, TokenGrant } from './client';
import { tokenError } from './errors';
import { consentScopes, parseScopes } from './scopes';
import { PUBLIC_PROVIDER_ENDPOINTS } from './types';

/**
 * The OAuth2Client endpoints for a GOOGLE_OAUTH_URL. Google serves the consent page on
 * accounts.google.com and the id_token certificates on www.googleapis.com, not on the token host:
 * for the public base those hosts are kept; any other base (a stand-in, a proxy) serves all of
 * them under itself, at Google's paths.
 */
export function googleEndpoints(base: string) {
  const b = base.replace(/\/+$/, '');
  const isPublic = b === PUBLIC_PROVIDER_ENDPOINTS.googleOAuthUrl;
  const accounts = isPublic ? 'https://accounts.google.com' : b;
  const certs = isPublic ? 'https://www.googleapis.com' : b;
  return {
    oauth2AuthBaseUrl: `${accounts}/o/oauth2/v2/auth`,
    oauth2TokenUrl: `${b}/token`,
    oauth2RevokeUrl: `${b}/revoke`,
    tokenInfoUrl: `${b}/tokeninfo`,
    oauth2FederatedSignonPemCertsUrl: `${certs}/oauth2/v1/certs`,
    oauth2FederatedSignonJwkCertsUrl: `${certs}/oauth2/v3/certs`,
  };
}

/** A gaxios error's response as a token failure (no response: a connection failure). */
function failureOf(err: unknown) {
  const res = (err as { response?: { status?: unknown; data?: unknown; headers?: unknown } }).response;
  if (!res || typeof res.status !== 'number') {
    return { status: null, description: (err as Error)?.message ?? String(err) };
  }
  const data = (typeof res.data === 'object' && res.data ? res.data : {}) as Record<string, unknown>;
  const h = res.headers as { get?: (n: string) => string | null } | Record<string, string> | undefined;
  const retryAfter =
    typeof (h as { get?: unknown })?.get === 'function'
      ? (h as { get: (n: string) => string | null }).get('retry-after')
      : ((h as Record<string, string> | undefined)?.['retry-after'] ?? null);
  return {
    status: res.status,
    error: typeof data.error === 'string' ? data.error : undefined,
    description: typeof data.error_description === 'string' ? data.error_description : undefined,
    retryAfter,
  };
}

export function googleOAuthClient(app: OAuthAppConfig, opts: OAuthClientOptions): OAuthClient {
  const newClient = async () =>
    new (await loadGoogleAuth()).OAuth2Client({
      clientId: app.clientId,
      clientSecret: app.clientSecret,
      endpoints: googleEndpoints(opts.endpoints.googleOAuthUrl),
      transporterOptions: { timeout: opts.timeoutMs },
    });

  /** The verified account email of an id_token (null without one). */
  const emailOf = async (
    client: OAuth2Client,
    idToken: string | null | undefined,
  ): Promise<string | null> => {
    if (!idToken) return null;
    let payload: { email?: string; email_verified?: boolean } | undefined;
    try {
      payload = (await client.verifyIdToken({ idToken, audience: app.clientId })).getPayload();
    } catch (err) {
      if ((err as { response?: unknown }).response) throw tokenError(failureOf(err));
      throw tokenError({ status: 400, error: 'invalid_id_token', description: (err as Error).message });
    }
    if (!payload?.email || payload.email_verified === false) return null;
    return payload.email.toLowerCase();
  };

  return {
    async consentUrl(req) {
      return (await newClient()).generateAuthUrl({
        access_type: 'offline',
        prompt: 'consent',
        response_type: 'code',
        scope: consentScopes('google', req.type),
        redirect_uri: req.redirectUri,
        state: req.state,
        code_challenge: req.codeChallenge,
        // biome-ignore lint/suspicious/noExplicitAny: the library's enum CodeChallengeMethod.S256 is 'S256'
        code_challenge_method: 'S256' as any,
        ...(req.loginHint ? { login_hint: req.loginHint } : {}),
      });
    },

    async exchangeCode(req): Promise<TokenGrant> {
      const client = await newClient();
      let tokens: Credentials;
      try {
        ({ tokens } = await client.getToken({
          code: req.code,
          codeVerifier: req.codeVerifier,
          redirect_uri: req.redirectUri,
        }));
      } catch (err) {
        throw tokenError(failureOf(err));
      }
      if (!tokens.access_token)
        throw tokenError({ status: 502, description: 'no access_token in the response' });
      return {
        accessToken: tokens.access_token,
        refreshToken: tokens.refresh_token ?? null,
        expiresAt: new Date(tokens.expiry_date ?? Date.now() + 3600_000),
        scopes: tokens.scope ? parseScopes(tokens.scope) : null,
        email: await emailOf(client, tokens.id_token),
      };
    },

    async refresh(req): Promise<TokenGrant> {
      const client = await newClient();
      // The raw response: the client puts the old refresh token back over a rotated one.
      let raw: { refresh_token?: string | null } = {};
      client.on('tokens', (t) => {
        raw = t;
      });
      client.setCredentials({ refresh_token: req.refreshToken });
      try {
        await client.getAccessToken();
      } catch (err) {
        throw tokenError(failureOf(err));
      }
      const credentials = client.credentials;
      if (!credentials.access_token)
        throw tokenError({ status: 502, description: 'no access_token in the response' });
      return {
        accessToken: credentials.access_token,
        refreshToken: raw.refresh_token && raw.refresh_token !== req.refreshToken ? raw.refresh_token : null,
        expiresAt: new Date(credentials.expiry_date ?? Date.now() + 3600_000),
        scopes: credentials.scope ? parseScopes(credentials.scope) : null,
        email: await emailOf(client, credentials.id_token),
      };
    },
  };
}
