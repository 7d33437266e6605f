/**
 * A stand-in for Google's OAuth 2.0 endpoints (developers.google.com/identity/protocols/oauth2/web-server),
 * over HTTPS on 127.0.0.1 with the test CA; point GOOGLE_OAUTH_URL at `url`. Paths as Google's:
 *
 * - GET  /o/oauth2/v2/auth     consent (accounts.google.com): 302 to redirect_uri with code + state;
 *                              a refresh token only with access_type=offline
 * - POST /token                authorization_code (PKCE S256) and refresh_token grants (oauth2.googleapis.com);
 *                              `invalid_grant` "Token has been expired or revoked." after revoke
 * - POST /revoke               token revocation
 * - GET  /oauth2/v1/certs      id_token signing certificates as {kid: PEM} (www.googleapis.com), /oauth2/v3/certs as JWKS
 *
 * Token answers: access_token, expires_in, refresh_token, scope (granted), token_type Bearer and
 * an RS256 id_token (iss https://accounts.google.com, aud = client id, email, email_verified).
 * Behaviour switches and records are on `auth` (oauth-standin.ts AuthorizationServer).
 */
import {
  AuthorizationServer,
  TestSigner,
  followConsent,
  readBody,
  sendJson,
  startHttps,
} from './oauth-standin';

export interface GoogleOAuthStandIn {
  url: string;
  auth: AuthorizationServer;
  /** Signs the id_tokens (`signer.forge = true`: with a key that is not published). */
  signer: TestSigner;
  /** A browser at the consent URL: the redirect back (with code and state, or error). */
  consent(consentUrl: string): Promise<URL>;
  close(): Promise<void>;
}

export async function startGoogleOAuth(opts: { account?: string } = {}): Promise<GoogleOAuthStandIn> {
  const signer = new TestSigner();
  const auth = new AuthorizationServer(opts.account ?? 'owner@gmail.test', (_status, error, description) => ({
    error,
    error_description: description,
  }));
  const server = await startHttps(async (req, res) => {
    const url = new URL(req.url ?? '/', 'https://stand-in');
    if (req.method === 'GET' && url.pathname === '/o/oauth2/v2/auth') {
      const q = url.searchParams;
      if (q.get('response_type') !== 'code') {
        res.writeHead(400, { 'content-type': 'text/plain' }).end('Error 400: unsupported_response_type');
        return;
      }
      const r = auth.authorize({
        clientId: q.get('client_id') ?? '',
        redirectUri: q.get('redirect_uri') ?? '',
        state: q.get('state'),
        scopes: (q.get('scope') ?? '').split(' ').filter(Boolean),
        challenge: q.get('code_challenge'),
        method: q.get('code_challenge_method') ?? (q.get('code_challenge') ? 'plain' : null),
        offline: q.get('access_type') === 'offline',
      });
      if ('redirect' in r) res.writeHead(302, { location: r.redirect }).end();
      else res.writeHead(r.status, { 'content-type': 'text/plain' }).end(r.text);
      return;
    }
    if (req.method === 'POST' && url.pathname === '/token') {
      const form = new URLSearchParams(await readBody(req));
      const now = Math.floor(Date.now() / 1000);
      const r = auth.token(form, req.headers.authorization, (t, grantType) => ({
        access_token: t.accessToken,
        expires_in: auth.accessTtlSeconds,
        // Google returns the refresh token on the code exchange only (it does not rotate it).
        ...(grantType === 'authorization_code' && t.refreshToken ? { refresh_token: t.refreshToken } : {}),
        scope: t.scopes.join(' '),
        token_type: 'Bearer',
        ...(t.scopes.includes('openid')
          ? {
              id_token: signer.sign({
                iss: 'https://accounts.google.com',
                azp: t.clientId,
                aud: t.clientId,
                sub: `1${Buffer.from(t.email).toString('hex').slice(0, 20)}`,
                ...(t.scopes.includes('email') ? { email: t.email, email_verified: true } : {}),
                iat: now,
                exp: now + 3600,
              }),
            }
          : {}),
      }));
      sendJson(res, r.status, r.body, r.headers);
      return;
    }
    if (req.method === 'POST' && url.pathname === '/revoke') {
      const form = new URLSearchParams(await readBody(req));
      const t = form.get('token') ?? url.searchParams.get('token') ?? '';
      if (auth.revokeToken(t)) sendJson(res, 200, {});
      else sendJson(res, 400, { error: 'invalid_token', error_description: 'Token expired or revoked' });
      return;
    }
    if (req.method === 'GET' && url.pathname === '/oauth2/v1/certs') {
      sendJson(res, 200, { [signer.kid]: signer.certPem }, { 'cache-control': 'public, max-age=3600' });
      return;
    }
    if (req.method === 'GET' && url.pathname === '/oauth2/v3/certs') {
      sendJson(res, 200, signer.jwks(), { 'cache-control': 'public, max-age=3600' });
      return;
    }
    sendJson(res, 404, { error: 'not_found' });
  });
  return { url: server.url, auth, signer, consent: followConsent, close: server.close };
}
