/**
 * What the Google and Microsoft OAuth stand-ins share (google-oauth.ts, microsoft-identity.ts):
 * an HTTPS server on 127.0.0.1 serving the test CA's certificate (trusted through
 * NODE_EXTRA_CA_CERTS), and an authorization server that behaves as the providers document:
 *
 * - authorize: checks the client and the redirect URI, then "the user" (consentAs) consents at
 *   once: 302 to the redirect URI with `code` and `state` (or `error=access_denied`).
 * - token, authorization_code: client authentication (secret in the body or Basic), a single-use
 *   code bound to its client and redirect URI, expiring after 10 minutes, and PKCE S256
 *   (SHA-256 of code_verifier must equal the code_challenge); answers an access token, a refresh
 *   token (when offline access was asked), the granted scope and an RS256 id_token.
 * - token, refresh_token: a new access token while the refresh token is valid; `invalid_grant`
 *   once it is revoked (revoke(email) = the user withdrew consent).
 * - on demand: the next N token requests answer 429 / 5xx with Retry-After (failNext).
 * - for the API stand-ins (gmail-api.ts, graph-api.ts): `bearer(email, scope)` accepts exactly
 *   the live access tokens issued for that account with that scope; `expireAccessTokens(email)`
 *   ends them before their stated expiry (the next API call is a 401, a refresh mends it);
 *   `revoke(email)` (consent withdrawn) ends the refresh tokens and the access tokens.
 *
 * id_tokens are signed with the test CA's RSA key; its certificate is the signing certificate the
 * stand-ins publish. Tests read what happened from `tokenRequests`.
 */
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  createSign,
  generateKeyPairSync,
  randomBytes,
} from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import { TEST_CA_CERT, TEST_CA_KEY, ensureTestCa } from './dovecot';

export interface StandInClient {
  clientId: string;
  clientSecret: string;
  /** Allowed redirect URIs; empty = any. */
  redirectUris?: string[];
}

export interface TokenRequestRecord {
  grantType: string;
  clientId: string;
  status: number;
  at: number;
}

export interface FailureSpec {
  status: number;
  /** Retry-After header value (seconds). */
  retryAfter?: string;
  error?: string;
}

interface Code {
  clientId: string;
  redirectUri: string;
  challenge: string | null;
  method: string | null;
  scopes: string[];
  email: string;
  offline: boolean;
  expiresAt: number;
  used: boolean;
  extra: Record<string, string>;
}

interface RefreshRecord {
  clientId: string;
  email: string;
  scopes: string[];
  revoked: boolean;
}

export interface AccessTokenInfo {
  clientId: string;
  email: string;
  scopes: string[];
  expiresAt: number;
}

export interface AuthorizeParams {
  clientId: string;
  redirectUri: string;
  state: string | null;
  scopes: string[];
  challenge: string | null;
  method: string | null;
  offline: boolean;
  extra?: Record<string, string>;
}

export interface IssuedTokens {
  accessToken: string;
  refreshToken: string | null;
  email: string;
  scopes: string[];
  clientId: string;
  extra: Record<string, string>;
}

/** Errors answered in the provider's own shape (google: {error, error_description}; microsoft adds codes). */
export type ErrorBody = (status: number, error: string, description: string) => Record<string, unknown>;

export const b64url = (b: Buffer | string) => Buffer.from(b).toString('base64url');
export const token = (prefix: string) => `${prefix}${randomBytes(24).toString('base64url')}`;

export class AuthorizationServer {
  readonly clients = new Map<string, StandInClient>();
  readonly tokenRequests: TokenRequestRecord[] = [];
  /** Whose account consents next. */
  account: string;
  /** Lifetime of issued access tokens. */
  accessTtlSeconds = 3599;
  /** Scopes the user leaves unticked on the next consents. */
  withheldScopes: string[] = [];
  /** Answer the next authorize with `error=access_denied`. */
  denyNext = false;
  private readonly codes = new Map<string, Code>();
  private readonly refreshTokens = new Map<string, RefreshRecord>();
  private readonly accessTokens = new Map<string, AccessTokenInfo>();
  private failures: FailureSpec[] = [];

  constructor(
    account: string,
    private readonly errorBody: ErrorBody,
  ) {
    this.account = account;
  }

  addClient(c: StandInClient): void {
    this.clients.set(c.clientId, c);
  }

  /** The next `n` token requests answer `spec`. */
  failNext(n: number, spec: FailureSpec): void {
    this.failures = Array.from({ length: n }, () => spec);
  }

  /**
   * The user withdraws consent: every refresh token of `email` stops working, and so do its
   * access tokens (Google ends them with the grant; the stand-ins do the same for Microsoft).
   */
  revoke(email: string): void {
    for (const r of this.refreshTokens.values()) if (r.email === email) r.revoked = true;
    this.expireAccessTokens(email);
  }

  /** The access tokens of `email` stop working before their stated expiry (the grant stays good). */
  expireAccessTokens(email: string): void {
    for (const [t, a] of this.accessTokens) if (a.email === email) this.accessTokens.delete(t);
  }

  /**
   * What an API stand-in accepts for the mailbox of `email`: a live access token issued for it
   * with `scope` (Graph scopes compared without their `https://graph.microsoft.com/` prefix).
   */
  bearer(email: string, scope: string): { accepts(authorization: string | undefined): boolean } {
    const bare = (s: string) => s.replace(/^https:\/\/graph\.microsoft\.com\//i, '').toLowerCase();
    return {
      accepts: (authorization) => {
        const m = /^Bearer (\S+)$/.exec(authorization ?? '');
        const info = m ? this.accessTokenInfo(m[1]!) : null;
        return (
          info !== null &&
          info.email.toLowerCase() === email.toLowerCase() &&
          info.scopes.some((s) => bare(s) === bare(scope))
        );
      },
    };
  }

  revokeToken(value: string): boolean {
    const r = this.refreshTokens.get(value);
    if (r) {
      r.revoked = true;
      return true;
    }
    const a = this.accessTokens.get(value);
    if (a) {
      this.accessTokens.delete(value);
      this.revoke(a.email);
      return true;
    }
    return false;
  }

  /** What an access token stands for (for API stand-ins checking bearer tokens); null when unknown or expired. */
  accessTokenInfo(value: string): AccessTokenInfo | null {
    const a = this.accessTokens.get(value);
    return a && a.expiresAt > Date.now() ? a : null;
  }

  /** Refresh tokens handed out and still valid for `email`. */
  liveRefreshTokens(email: string): string[] {
    return [...this.refreshTokens.entries()]
      .filter(([, r]) => r.email === email && !r.revoked)
      .map(([t]) => t);
  }

  /** Issues a refresh token directly (a token "the tenant obtained elsewhere"). */
  issueRefreshToken(clientId: string, email: string, scopes: string[]): string {
    const t = token('1//rt-');
    this.refreshTokens.set(t, { clientId, email, scopes, revoked: false });
    return t;
  }

  count(grantType: string): number {
    return this.tokenRequests.filter((r) => r.grantType === grantType && r.status === 200).length;
  }

  /** The redirect of an authorize request: a URL with `code` (or `error`) and `state`; an error answer for a bad client. */
  authorize(p: AuthorizeParams): { redirect: string } | { status: number; text: string } {
    const client = this.clients.get(p.clientId);
    if (!client) return { status: 401, text: 'Error 401: invalid_client' };
    if (client.redirectUris?.length && !client.redirectUris.includes(p.redirectUri))
      return { status: 400, text: 'Error 400: redirect_uri_mismatch' };
    const target = new URL(p.redirectUri);
    if (p.state !== null) target.searchParams.set('state', p.state);
    if (this.denyNext) {
      this.denyNext = false;
      target.searchParams.set('error', 'access_denied');
      return { redirect: target.toString() };
    }
    const code = token('4/code-');
    this.codes.set(code, {
      clientId: p.clientId,
      redirectUri: p.redirectUri,
      challenge: p.challenge,
      method: p.method,
      scopes: p.scopes.filter((s) => !this.withheldScopes.includes(s)),
      email: this.account,
      offline: p.offline,
      expiresAt: Date.now() + 600_000,
      used: false,
      extra: p.extra ?? {},
    });
    target.searchParams.set('code', code);
    return { redirect: target.toString() };
  }

  /**
   * A token request (form fields and Authorization header). Returns the HTTP status and body
   * (the caller adds provider-specific fields to a success through `decorate`).
   */
  token(
    form: URLSearchParams,
    authorization: string | undefined,
    decorate: (
      issued: IssuedTokens,
      grantType: 'authorization_code' | 'refresh_token',
    ) => Record<string, unknown>,
  ): { status: number; body: Record<string, unknown>; headers?: Record<string, string> } {
    const grantType = form.get('grant_type') ?? '';
    const record = (status: number, clientId: string) =>
      this.tokenRequests.push({ grantType, clientId, status, at: Date.now() });
    const fail = this.failures.shift();
    if (fail) {
      record(fail.status, form.get('client_id') ?? '');
      return {
        status: fail.status,
        body: this.errorBody(fail.status, fail.error ?? 'temporarily_unavailable', 'Try again later.'),
        headers: fail.retryAfter !== undefined ? { 'retry-after': fail.retryAfter } : {},
      };
    }
    const err = (status: number, error: string, description: string, clientId = '') => {
      record(status, clientId);
      return { status, body: this.errorBody(status, error, description) };
    };
    // Client authentication: client_secret_post or client_secret_basic.
    let clientId = form.get('client_id') ?? '';
    let secret = form.get('client_secret') ?? '';
    const basic = /^Basic\s+(\S+)$/i.exec(authorization ?? '');
    if (basic) {
      const [id, s] = Buffer.from(basic[1]!, 'base64').toString('utf8').split(':');
      clientId = decodeURIComponent(id ?? '');
      secret = decodeURIComponent(s ?? '');
    }
    const client = this.clients.get(clientId);
    if (!client || client.clientSecret !== secret)
      return err(401, 'invalid_client', 'Unauthorized', clientId);

    if (grantType === 'authorization_code') {
      const code = this.codes.get(form.get('code') ?? '');
      if (!code || code.clientId !== clientId)
        return err(400, 'invalid_grant', 'Malformed auth code.', clientId);
      if (code.used || code.expiresAt < Date.now())
        return err(400, 'invalid_grant', 'Bad Request: the code was already used or has expired.', clientId);
      code.used = true;
      if (form.get('redirect_uri') !== code.redirectUri)
        return err(400, 'redirect_uri_mismatch', 'Bad Request', clientId);
      if (code.challenge !== null) {
        const verifier = form.get('code_verifier') ?? '';
        const computed =
          code.method === 'S256' ? createHash('sha256').update(verifier).digest('base64url') : verifier;
        if (!verifier || computed !== code.challenge)
          return err(400, 'invalid_grant', 'Invalid code verifier.', clientId);
      }
      const refresh = code.offline ? token('1//rt-') : null;
      if (refresh)
        this.refreshTokens.set(refresh, { clientId, email: code.email, scopes: code.scopes, revoked: false });
      record(200, clientId);
      return {
        status: 200,
        body: decorate(this.issue(clientId, code.email, code.scopes, refresh, code.extra), grantType),
      };
    }

    if (grantType === 'refresh_token') {
      const rt = form.get('refresh_token') ?? '';
      const r = this.refreshTokens.get(rt);
      if (!r || r.clientId !== clientId || r.revoked)
        return err(400, 'invalid_grant', 'Token has been expired or revoked.', clientId);
      record(200, clientId);
      return { status: 200, body: decorate(this.issue(clientId, r.email, r.scopes, rt, {}), grantType) };
    }
    return err(400, 'unsupported_grant_type', `Invalid grant_type: ${grantType}`, clientId);
  }

  /** Rotates: a new refresh token replacing `rt` (Microsoft's behaviour). */
  rotate(rt: string): string {
    const r = this.refreshTokens.get(rt);
    if (!r) return rt;
    const next = token('1//rt-');
    this.refreshTokens.set(next, { ...r });
    return next;
  }

  private issue(
    clientId: string,
    email: string,
    scopes: string[],
    refreshToken: string | null,
    extra: Record<string, string>,
  ): IssuedTokens {
    const accessToken = token('ya29.at-');
    this.accessTokens.set(accessToken, {
      clientId,
      email,
      scopes,
      expiresAt: Date.now() + this.accessTtlSeconds * 1000,
    });
    return { accessToken, refreshToken, email, scopes, clientId, extra };
  }
}

/** RS256 JWTs signed with the test CA key, and the key's publication forms. */
export class TestSigner {
  readonly kid: string;
  readonly certPem: string;
  private readonly keyPem: string;
  /** Sign with a key nobody published (a forged id_token). */
  forge = false;

  constructor() {
    this.certPem = readFileSync(TEST_CA_CERT, 'utf8');
    this.keyPem = readFileSync(TEST_CA_KEY, 'utf8');
    this.kid = createHash('sha256').update(this.certPem).digest('hex').slice(0, 40);
  }

  sign(claims: Record<string, unknown>): string {
    const head = b64url(JSON.stringify({ alg: 'RS256', kid: this.kid, typ: 'JWT' }));
    const body = b64url(JSON.stringify(claims));
    const key = this.forge
      ? generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey
      : createPrivateKey(this.keyPem);
    const sig = createSign('RSA-SHA256').update(`${head}.${body}`).sign(key);
    return `${head}.${body}.${b64url(sig)}`;
  }

  jwks(): { keys: Record<string, unknown>[] } {
    const jwk = createPublicKey(this.certPem).export({ format: 'jwk' });
    return { keys: [{ ...jwk, kid: this.kid, alg: 'RS256', use: 'sig' }] };
  }
}

export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(JSON.stringify(body));
}

export interface HttpsStandIn {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** An HTTPS server on 127.0.0.1 (free port) with the test CA's certificate. */
export async function startHttps(
  handler: (req: IncomingMessage, res: ServerResponse) => Promise<void> | void,
): Promise<HttpsStandIn> {
  await ensureTestCa();
  const server = createServer(
    { cert: readFileSync(TEST_CA_CERT), key: readFileSync(TEST_CA_KEY) },
    (req, res) => {
      Promise.resolve(handler(req, res)).catch((err: Error) => {
        if (!res.headersSent) sendJson(res, 500, { error: 'server_error', error_description: err.message });
      });
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `https://127.0.0.1:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * What a browser does with a consent URL at the stand-in: GET it and read the redirect
 * (Location) instead of following it. Throws with the page text when there is no redirect.
 */
export function followConsent(consentUrl: string): Promise<URL> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(consentUrl, { method: 'GET' }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => {
        text += c.toString('utf8');
      });
      res.on('end', () => {
        const loc = res.headers.location;
        if (res.statusCode === 302 && loc) resolve(new URL(loc));
        else reject(new Error(`authorize answered ${res.statusCode}: ${text}`));
      });
    });
    req.on('error', reject);
    req.end();
  });
}
