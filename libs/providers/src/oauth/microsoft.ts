/**
 * Microsoft's identity platform through @azure/msal-node's ConfidentialClientApplication: the
 * authority is MICROSOFT_LOGIN_URL/<directory>, declared a known authority with its discovery
 * and openid-configuration given offline (microsoft-metadata.ts). Consent URL (PKCE S256,
 * offline_access for a refresh token), code exchange and refresh-token exchange; the account's
 * email comes from the id_token claims (`email`, else `preferred_username`).
 *
 * MSAL keeps refresh tokens in its token cache and does not return them: every operation uses a
 * fresh application (an empty cache, nothing shared between tenants or mailers) and reads the
 * refresh token it received from that cache afterwards (Microsoft rotates refresh tokens).
 */
import type { AuthenticationResult, ConfidentialClientApplication } from '@azure/msal-node';
import { loadMsal } from '../lazy-sdks';
import type { OAuthAppConfig, OAuthClient, OAuthClientOptions, TokenGrant } from './client';
import { tokenError } from './errors';
import { microsoftAuthority } from './microsoft-metadata';
import { RecordingNetwork } from './msal-network';
import { consentScopes } from './scopes';

const EMAIL_RE = /^[^\s@]+@[^\s@]+$/;

function emailOf(result: AuthenticationResult): string | null {
  const claims = (result.idTokenClaims ?? {}) as { email?: unknown; preferred_username?: unknown };
  for (const c of [claims.email, claims.preferred_username, result.account?.username])
    if (typeof c === 'string' && EMAIL_RE.test(c)) return c.toLowerCase();
  return null;
}

/** The refresh token MSAL stored in this application's (fresh) cache. */
function refreshTokenIn(cca: ConfidentialClientApplication): string | null {
  const cache = JSON.parse(cca.getTokenCache().serialize()) as {
    RefreshToken?: Record<string, { secret?: string }>;
  };
  for (const entry of Object.values(cache.RefreshToken ?? {})) if (entry.secret) return entry.secret;
  return null;
}

export function microsoftOAuthClient(app: OAuthAppConfig, opts: OAuthClientOptions): OAuthClient {
  const meta = microsoftAuthority(opts.endpoints.microsoftLoginUrl, app.directoryTenant ?? 'common');

  const application = async () => {
    const { ConfidentialClientApplication, LogLevel } = await loadMsal();
    const network = new RecordingNetwork(opts.timeoutMs);
    const cca = new ConfidentialClientApplication({
      auth: {
        clientId: app.clientId,
        clientSecret: app.clientSecret,
        authority: meta.authority,
        knownAuthorities: [meta.host],
        cloudDiscoveryMetadata: meta.cloudDiscoveryMetadata,
        authorityMetadata: meta.authorityMetadata,
      },
      system: {
        networkClient: network,
        loggerOptions: { piiLoggingEnabled: false, logLevel: LogLevel.Error, loggerCallback: () => {} },
      },
    });
    return { cca, network };
  };

  /** Runs one token request; a failure becomes the seam's error from what the network saw. */
  const tokenRequest = async (
    run: (cca: ConfidentialClientApplication) => Promise<AuthenticationResult | null>,
  ): Promise<TokenGrant> => {
    const { cca, network } = await application();
    let result: AuthenticationResult | null;
    try {
      result = await run(cca);
    } catch (err) {
      const seen = network.last;
      if (!seen) throw tokenError({ status: null, description: (err as Error).message });
      if (seen.status !== null && seen.status < 300)
        throw tokenError({ status: 400, error: 'invalid_response', description: (err as Error).message });
      throw tokenError(seen);
    }
    if (!result?.accessToken)
      throw tokenError({ status: 400, error: 'invalid_response', description: 'no access token' });
    return {
      accessToken: result.accessToken,
      refreshToken: refreshTokenIn(cca),
      expiresAt: result.expiresOn ?? new Date(Date.now() + 3600_000),
      scopes: result.scopes.length > 0 ? result.scopes : null,
      email: emailOf(result),
    };
  };

  return {
    async consentUrl(req) {
      return (await application()).cca.getAuthCodeUrl({
        scopes: consentScopes('microsoft', req.type),
        redirectUri: req.redirectUri,
        state: req.state,
        codeChallenge: req.codeChallenge,
        codeChallengeMethod: 'S256',
        responseMode: 'query',
        ...(req.loginHint ? { loginHint: req.loginHint } : {}),
      });
    },

    exchangeCode(req) {
      return tokenRequest((cca) =>
        cca.acquireTokenByCode({
          code: req.code,
          scopes: consentScopes('microsoft', req.type),
          redirectUri: req.redirectUri,
          codeVerifier: req.codeVerifier,
        }),
      );
    },

    refresh(req) {
      return tokenRequest((cca) =>
        cca.acquireTokenByRefreshToken({
          refreshToken: req.refreshToken,
          scopes: consentScopes('microsoft', req.type),
          forceCache: true,
        }),
      );
    },
  };
}
