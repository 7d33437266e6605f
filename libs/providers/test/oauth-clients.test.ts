/**
 * The provider clients (google-auth-library's OAuth2Client, msal-node's
 * ConfidentialClientApplication) against the local stand-ins of Google's and Microsoft's OAuth
 * endpoints over TLS (test CA): consent, code exchange with PKCE, refresh, revocation, throttling
 * with Retry-After, a refused app. Nothing is mocked: the libraries make real HTTPS requests.
 */
import { type GoogleOAuthStandIn, startGoogleOAuth } from '@mailyard/testkit/peers/google-oauth';
import {
  type MicrosoftIdentityStandIn,
  startMicrosoftIdentity,
} from '@mailyard/testkit/peers/microsoft-identity';
import type { OAuthAppConfig, OAuthClient } from '../src/oauth/client';
import { OAuthAppRejectedError, OAuthRequestError } from '../src/oauth/errors';
import { microsoftAuthority } from '../src/oauth/microsoft-metadata';
import { oauthClientFor } from '../src/oauth/oauth-client';
import { newPkce } from '../src/oauth/pkce';
import { OAuthRevokedError, PUBLIC_PROVIDER_ENDPOINTS, ProviderThrottledError } from '../src/oauth/types';

jest.setTimeout(60_000);

const REDIRECT = 'https://api.example.test/v1/oauth/callback';
let google: GoogleOAuthStandIn;
let microsoft: MicrosoftIdentityStandIn;

beforeAll(async () => {
  [google, microsoft] = await Promise.all([startGoogleOAuth(), startMicrosoftIdentity()]);
  google.auth.addClient({ clientId: 'g-client', clientSecret: 'g-secret', redirectUris: [REDIRECT] });
  microsoft.auth.addClient({ clientId: 'm-client', clientSecret: 'm-secret', redirectUris: [REDIRECT] });
});
afterAll(async () => {
  await google?.close();
  await microsoft?.close();
});

const endpoints = () => ({
  ...PUBLIC_PROVIDER_ENDPOINTS,
  googleOAuthUrl: google.url,
  microsoftLoginUrl: microsoft.url,
});

const app = (provider: 'google' | 'microsoft', over: Partial<OAuthAppConfig> = {}): OAuthAppConfig => ({
  appId: 'oauthapp_x',
  provider,
  clientId: provider === 'google' ? 'g-client' : 'm-client',
  clientSecret: provider === 'google' ? 'g-secret' : 'm-secret',
  redirectUri: null,
  directoryTenant: provider === 'microsoft' ? 'contoso.test' : null,
  tenantApp: true,
  ...over,
});

const client = (provider: 'google' | 'microsoft', over: Partial<OAuthAppConfig> = {}): OAuthClient =>
  oauthClientFor(app(provider, over), { endpoints: endpoints(), timeoutMs: 5000 });

/** Consent in the stand-in and return the code the browser brings back. */
async function codeFor(provider: 'google' | 'microsoft', c: OAuthClient, challenge: string, state = 'st') {
  const url = await c.consentUrl({
    type: 'smtp_imap',
    redirectUri: REDIRECT,
    state,
    codeChallenge: challenge,
  });
  const back = await (provider === 'google' ? google : microsoft).consent(url);
  expect(back.searchParams.get('state')).toBe(state);
  return back.searchParams.get('code')!;
}

describe.each(['google', 'microsoft'] as const)('%s OAuth client against the stand-in', (provider) => {
  const standIn = () => (provider === 'google' ? google : microsoft);
  const account = () => standIn().auth.account;

  it('exchanges a code with its PKCE verifier: tokens, expiry, granted scopes, the account email', async () => {
    const c = client(provider);
    const pkce = newPkce();
    const code = await codeFor(provider, c, pkce.challenge);
    const before = Date.now();
    const g = await c.exchangeCode({
      type: 'smtp_imap',
      code,
      redirectUri: REDIRECT,
      codeVerifier: pkce.verifier,
    });
    expect(g.email).toBe(account());
    expect(g.refreshToken).toBeTruthy();
    expect(standIn().auth.accessTokenInfo(g.accessToken)).toMatchObject({ email: account() });
    expect(g.expiresAt.getTime()).toBeGreaterThan(before + 3000_000);
    expect(g.scopes!.join(' ')).toMatch(
      provider === 'google' ? /gmail\.send.*gmail\.readonly/ : /Mail\.Read/,
    );
    if (provider === 'microsoft') expect(microsoft.directories.at(-1)).toBe('contoso.test');
  });

  it('refuses a wrong verifier and a replayed code (invalid_grant)', async () => {
    const c = client(provider);
    const pkce = newPkce();
    const code = await codeFor(provider, c, pkce.challenge);
    await expect(
      c.exchangeCode({ type: 'smtp_imap', code, redirectUri: REDIRECT, codeVerifier: newPkce().verifier }),
    ).rejects.toBeInstanceOf(OAuthRevokedError);
    // The code was spent by that attempt.
    await expect(
      c.exchangeCode({ type: 'smtp_imap', code, redirectUri: REDIRECT, codeVerifier: pkce.verifier }),
    ).rejects.toBeInstanceOf(OAuthRevokedError);
  });

  it('refreshes; after revocation the refresh is invalid_grant -> OAuthRevokedError', async () => {
    standIn().auth.account = `refresh-${provider}@example.test`;
    const c = client(provider);
    const pkce = newPkce();
    const g = await c.exchangeCode({
      type: 'smtp_imap',
      code: await codeFor(provider, c, pkce.challenge),
      redirectUri: REDIRECT,
      codeVerifier: pkce.verifier,
    });
    const r = await c.refresh({ type: 'smtp_imap', refreshToken: g.refreshToken! });
    expect(r.accessToken).not.toBe(g.accessToken);
    expect(standIn().auth.accessTokenInfo(r.accessToken)?.email).toBe(standIn().auth.account);
    // Google keeps the refresh token; Microsoft rotates it.
    if (provider === 'google') expect(r.refreshToken).toBeNull();
    else expect(r.refreshToken).toBeTruthy();
    standIn().auth.revoke(standIn().auth.account);
    const err = await c.refresh({ type: 'smtp_imap', refreshToken: g.refreshToken! }).catch((e) => e);
    expect(err).toBeInstanceOf(OAuthRevokedError);
    expect((err as Error).message).toMatch(/^invalid_grant/);
    expect((err as Error).message).not.toContain(g.refreshToken!);
  });

  it('429 with Retry-After, past the library retries -> ProviderThrottledError with retryAfterMs', async () => {
    const rt = standIn().auth.issueRefreshToken(app(provider).clientId, 'busy@example.test', [
      'openid',
      'email',
    ]);
    standIn().auth.failNext(10, { status: 429, retryAfter: '7' });
    const err = await client(provider)
      .refresh({ type: 'smtp', refreshToken: rt })
      .catch((e) => e);
    standIn().auth.failNext(0, { status: 429 });
    expect(err).toBeInstanceOf(ProviderThrottledError);
    expect(err).toMatchObject({ status: 429, retryAfterMs: 7000 });
  });

  it('a 503 once is retried by the library and the refresh succeeds', async () => {
    const rt = standIn().auth.issueRefreshToken(app(provider).clientId, 'flaky@example.test', [
      'openid',
      'email',
    ]);
    const before = standIn().auth.tokenRequests.length;
    standIn().auth.failNext(1, { status: 503, retryAfter: '0' });
    const c = client(provider);
    const result = await c.refresh({ type: 'smtp', refreshToken: rt }).catch((e) => e);
    const seen = standIn()
      .auth.tokenRequests.slice(before)
      .map((r) => r.status);
    if (provider === 'google') {
      // gaxios retries 5xx itself.
      expect(result.accessToken).toBeTruthy();
      expect(seen).toEqual([503, 200]);
    } else {
      // MSAL reports it; the caller retries later.
      expect(result).toBeInstanceOf(ProviderThrottledError);
      expect(result).toMatchObject({ status: 503, retryAfterMs: 0 });
      expect((await c.refresh({ type: 'smtp', refreshToken: rt })).accessToken).toBeTruthy();
    }
  });

  it('a wrong client secret is the app refused (invalid_client), not a revoked grant', async () => {
    const rt = standIn().auth.issueRefreshToken(app(provider).clientId, 'app@example.test', ['openid']);
    await expect(
      client(provider, { clientSecret: 'wrong' }).refresh({ type: 'smtp', refreshToken: rt }),
    ).rejects.toBeInstanceOf(OAuthAppRejectedError);
  });

  it('a refused redirect URI is a request error', async () => {
    const c = client(provider);
    const pkce = newPkce();
    const code = await codeFor(provider, c, pkce.challenge);
    const err = await c
      .exchangeCode({
        type: 'smtp_imap',
        code,
        redirectUri: 'https://elsewhere.test/cb',
        codeVerifier: pkce.verifier,
      })
      .catch((e) => e);
    expect(err).toBeInstanceOf(OAuthRequestError);
  });
});

it('the offline Microsoft metadata matches what the identity platform serves', async () => {
  for (const dir of ['common', 'contoso.test']) {
    const res = await fetch(`${microsoft.url}/${dir}/v2.0/.well-known/openid-configuration`);
    const served = (await res.json()) as Record<string, string>;
    const offline = JSON.parse(microsoftAuthority(microsoft.url, dir).authorityMetadata);
    for (const k of [
      'token_endpoint',
      'authorization_endpoint',
      'issuer',
      'jwks_uri',
      'end_session_endpoint',
    ])
      expect({ k, v: offline[k] }).toEqual({ k, v: served[k] });
  }
});

it('Google: an id_token not signed by a published key is refused', async () => {
  const c = client('google');
  const exchange = async () => {
    const pkce = newPkce();
    const url = await c.consentUrl({
      type: 'smtp',
      redirectUri: REDIRECT,
      state: 's',
      codeChallenge: pkce.challenge,
    });
    const code = (await google.consent(url)).searchParams.get('code')!;
    return c.exchangeCode({ type: 'smtp', code, redirectUri: REDIRECT, codeVerifier: pkce.verifier });
  };
  google.signer.forge = true;
  const forged = await exchange().catch((e) => e);
  google.signer.forge = false;
  expect(forged).toBeInstanceOf(OAuthRequestError);
  expect((forged as Error).message).toMatch(/invalid_id_token/);
  expect((await exchange()).email).toBe(google.auth.account);
});
