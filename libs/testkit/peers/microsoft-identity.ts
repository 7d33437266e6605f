/**
 * A stand-in for the Microsoft identity platform v2.0 endpoints
 * (learn.microsoft.com/entra/identity-platform/v2-oauth2-auth-code-flow), over HTTPS on 127.0.0.1
 * with the test CA (MSAL accepts https authorities only); point MICROSOFT_LOGIN_URL at `url`:
 *
 * - GET  /{tenant}/v2.0/.well-known/openid-configuration
 * - GET  /{tenant}/oauth2/v2.0/authorize   302 to redirect_uri with code + state (response_mode=query)
 * - POST /{tenant}/oauth2/v2.0/token       authorization_code (PKCE S256) and refresh_token grants;
 *                                          refresh tokens rotate; errors with AADSTS codes
 * - GET  /{tenant}/discovery/v2.0/keys     JWKS of the id_token key
 *
 * Token answers: token_type, scope (Graph scopes as https://graph.microsoft.com/...), expires_in,
 * ext_expires_in, access_token, refresh_token (with offline_access), id_token (v2.0 claims:
 * preferred_username, email with the email scope, oid, tid) and client_info. `directories`
 * records the {tenant} path segment of every token request.
 */
import { randomUUID } from 'node:crypto';
import {
  AuthorizationServer,
  TestSigner,
  b64url,
  followConsent,
  readBody,
  sendJson,
  startHttps,
} from './oauth-standin';

const AADSTS: Record<string, [number, string]> = {
  invalid_grant: [70000, 'AADSTS70000: The provided value for the input parameter is not valid.'],
  invalid_client: [7000215, 'AADSTS7000215: Invalid client secret provided.'],
  temporarily_unavailable: [
    50196,
    'AADSTS50196: The server terminated an operation because it encountered a client request loop.',
  ],
};

const OIDC = new Set(['openid', 'profile', 'email', 'offline_access']);

export interface MicrosoftIdentityStandIn {
  url: string;
  auth: AuthorizationServer;
  /** The account's directory (tid). */
  tenantId: string;
  /** The {tenant} path segment of each token request. */
  directories: string[];
  consent(consentUrl: string): Promise<URL>;
  close(): Promise<void>;
}

export async function startMicrosoftIdentity(
  opts: { account?: string } = {},
): Promise<MicrosoftIdentityStandIn> {
  const signer = new TestSigner();
  const tenantId = randomUUID();
  const directories: string[] = [];
  const auth = new AuthorizationServer(
    opts.account ?? 'owner@contoso.test',
    (_status, error, description) => {
      const [code, text] = AADSTS[error] ?? [90000, `AADSTS90000: ${description}`];
      const stamp = new Date()
        .toISOString()
        .replace('T', ' ')
        .replace(/\.\d+Z$/, 'Z');
      return {
        error,
        error_description: `${text} ${description} Trace ID: ${randomUUID()} Correlation ID: ${randomUUID()} Timestamp: ${stamp}`,
        error_codes: [code],
        timestamp: stamp,
        trace_id: randomUUID(),
        correlation_id: randomUUID(),
      };
    },
  );
  const oidFor = (email: string) => {
    const h = Buffer.from(email).toString('hex').padEnd(32, '0').slice(0, 32);
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
  };
  let base = '';
  const server = await startHttps(async (req, res) => {
    const url = new URL(req.url ?? '/', 'https://stand-in');
    const m =
      /^\/([A-Za-z0-9.-]+)\/(v2\.0\/\.well-known\/openid-configuration|oauth2\/v2\.0\/authorize|oauth2\/v2\.0\/token|discovery\/v2\.0\/keys)$/.exec(
        url.pathname,
      );
    if (!m) return sendJson(res, 404, { error: 'not_found' });
    const [, directory, what] = m as unknown as [string, string, string];
    const issuerTenant = ['common', 'organizations', 'consumers'].includes(directory)
      ? '{tenantid}'
      : directory;
    const authority = `${base}/${directory}`;
    if (req.method === 'GET' && what.startsWith('v2.0/')) {
      return sendJson(res, 200, {
        token_endpoint: `${authority}/oauth2/v2.0/token`,
        token_endpoint_auth_methods_supported: [
          'client_secret_post',
          'private_key_jwt',
          'client_secret_basic',
        ],
        jwks_uri: `${authority}/discovery/v2.0/keys`,
        response_modes_supported: ['query', 'fragment', 'form_post'],
        subject_types_supported: ['pairwise'],
        id_token_signing_alg_values_supported: ['RS256'],
        response_types_supported: ['code', 'id_token', 'code id_token', 'id_token token'],
        scopes_supported: ['openid', 'profile', 'email', 'offline_access'],
        issuer: `${base}/${issuerTenant}/v2.0`,
        authorization_endpoint: `${authority}/oauth2/v2.0/authorize`,
        end_session_endpoint: `${authority}/oauth2/v2.0/logout`,
      });
    }
    if (req.method === 'GET' && what === 'discovery/v2.0/keys') return sendJson(res, 200, signer.jwks());
    if (req.method === 'GET' && what === 'oauth2/v2.0/authorize') {
      const q = url.searchParams;
      const scopes = (q.get('scope') ?? '').split(' ').filter(Boolean);
      const r = auth.authorize({
        clientId: q.get('client_id') ?? '',
        redirectUri: q.get('redirect_uri') ?? '',
        state: q.get('state'),
        scopes,
        challenge: q.get('code_challenge'),
        method: q.get('code_challenge_method') ?? (q.get('code_challenge') ? 'plain' : null),
        offline: scopes.includes('offline_access'),
        extra: { nonce: q.get('nonce') ?? '' },
      });
      if ('redirect' in r) res.writeHead(302, { location: r.redirect }).end();
      else res.writeHead(r.status, { 'content-type': 'text/plain' }).end(r.text);
      return;
    }
    if (req.method === 'POST' && what === 'oauth2/v2.0/token') {
      directories.push(directory);
      const form = new URLSearchParams(await readBody(req));
      const now = Math.floor(Date.now() / 1000);
      const r = auth.token(form, req.headers.authorization, (t, grantType) => {
        const oid = oidFor(t.email);
        const graph = t.scopes
          .filter((s) => !OIDC.has(s))
          .map((s) => (s.includes('/') ? s : `https://graph.microsoft.com/${s}`));
        const refresh =
          t.refreshToken === null
            ? null
            : grantType === 'refresh_token'
              ? auth.rotate(t.refreshToken)
              : t.refreshToken;
        return {
          token_type: 'Bearer',
          scope: [...graph, ...t.scopes.filter((s) => OIDC.has(s))].join(' '),
          expires_in: auth.accessTtlSeconds,
          ext_expires_in: auth.accessTtlSeconds,
          access_token: t.accessToken,
          ...(refresh ? { refresh_token: refresh } : {}),
          ...(t.scopes.includes('openid')
            ? {
                id_token: signer.sign({
                  ver: '2.0',
                  iss: `${base}/${tenantId}/v2.0`,
                  sub: b64url(oid),
                  aud: t.clientId,
                  exp: now + 3600,
                  iat: now,
                  nbf: now,
                  name: t.email.split('@')[0],
                  preferred_username: t.email,
                  oid,
                  tid: tenantId,
                  ...(t.scopes.includes('email') ? { email: t.email } : {}),
                  ...(t.extra.nonce ? { nonce: t.extra.nonce } : {}),
                }),
              }
            : {}),
          client_info: b64url(JSON.stringify({ uid: oid, utid: tenantId })),
        };
      });
      return sendJson(res, r.status, r.body, r.headers);
    }
    sendJson(res, 405, { error: 'invalid_request', error_description: 'method not allowed' });
  });
  base = server.url;
  return { url: server.url, auth, tenantId, directories, consent: followConsent, close: server.close };
}
