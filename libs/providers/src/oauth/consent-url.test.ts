/**
 * Consent URLs as the real libraries build them (google-auth-library, msal-node with its
 * metadata given offline: no network is touched): the parameters each provider documents for
 * an offline grant with PKCE.
 */
import type { OAuthAppConfig } from './client';
import { googleEndpoints } from './google';
import { oauthClientFor } from './oauth-client';
import { codeChallengeOf, newPkce } from './pkce';
import { PUBLIC_PROVIDER_ENDPOINTS } from './types';

const app = (provider: 'google' | 'microsoft', directoryTenant: string | null = null): OAuthAppConfig => ({
  appId: 'oauthapp_01',
  provider,
  clientId: `${provider}-client-id`,
  clientSecret: 'secret',
  redirectUri: null,
  directoryTenant,
  tenantApp: true,
});
const opts = { endpoints: PUBLIC_PROVIDER_ENDPOINTS, timeoutMs: 1000 };
const REDIRECT = 'https://api.example.com/v1/oauth/callback';

describe('consent URL', () => {
  it('Google: offline access, forced consent, PKCE S256, the type scopes, state', async () => {
    const pkce = newPkce();
    const url = new URL(
      await oauthClientFor(app('google'), opts).consentUrl({
        type: 'smtp_imap',
        redirectUri: REDIRECT,
        state: 'signed.state',
        codeChallenge: pkce.challenge,
        loginHint: 'owner@example.com',
      }),
    );
    expect(`${url.origin}${url.pathname}`).toBe('https://accounts.google.com/o/oauth2/v2/auth');
    const q = Object.fromEntries(url.searchParams);
    expect(q).toMatchObject({
      access_type: 'offline',
      prompt: 'consent',
      response_type: 'code',
      client_id: 'google-client-id',
      redirect_uri: REDIRECT,
      state: 'signed.state',
      code_challenge: pkce.challenge,
      code_challenge_method: 'S256',
      login_hint: 'owner@example.com',
    });
    expect(q.scope!.split(' ')).toEqual([
      'openid',
      'email',
      'https://www.googleapis.com/auth/gmail.send',
      'https://www.googleapis.com/auth/gmail.readonly',
    ]);
    expect(q.code_challenge).toBe(codeChallengeOf(pkce.verifier));
    expect(url.search).not.toContain(pkce.verifier);
  });

  it('Google: a send-only mailer asks for gmail.send only', async () => {
    const url = new URL(
      await oauthClientFor(app('google'), opts).consentUrl({
        type: 'smtp',
        redirectUri: REDIRECT,
        state: 's',
        codeChallenge: newPkce().challenge,
      }),
    );
    expect(url.searchParams.get('scope')).toBe('openid email https://www.googleapis.com/auth/gmail.send');
    expect(url.searchParams.has('login_hint')).toBe(false);
  });

  it('Google: a non-public GOOGLE_OAUTH_URL serves every endpoint under itself', () => {
    expect(googleEndpoints('https://127.0.0.1:9443/')).toMatchObject({
      oauth2AuthBaseUrl: 'https://127.0.0.1:9443/o/oauth2/v2/auth',
      oauth2TokenUrl: 'https://127.0.0.1:9443/token',
      oauth2FederatedSignonPemCertsUrl: 'https://127.0.0.1:9443/oauth2/v1/certs',
    });
    expect(googleEndpoints(PUBLIC_PROVIDER_ENDPOINTS.googleOAuthUrl)).toMatchObject({
      oauth2TokenUrl: 'https://oauth2.googleapis.com/token',
      oauth2FederatedSignonPemCertsUrl: 'https://www.googleapis.com/oauth2/v1/certs',
    });
  });

  it('Microsoft: the directory authority, offline_access Mail.Send Mail.Read openid email, PKCE S256', async () => {
    const pkce = newPkce();
    const url = new URL(
      await oauthClientFor(app('microsoft', 'contoso.onmicrosoft.com'), opts).consentUrl({
        type: 'smtp_imap',
        redirectUri: REDIRECT,
        state: 'signed.state',
        codeChallenge: pkce.challenge,
      }),
    );
    expect(`${url.origin}${url.pathname}`).toBe(
      'https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/authorize',
    );
    const q = Object.fromEntries(url.searchParams);
    expect(q).toMatchObject({
      client_id: 'microsoft-client-id',
      redirect_uri: REDIRECT,
      response_type: 'code',
      response_mode: 'query',
      state: 'signed.state',
      code_challenge: pkce.challenge,
      code_challenge_method: 'S256',
    });
    expect(q.scope!.split(' ')).toEqual(
      expect.arrayContaining(['offline_access', 'openid', 'email', 'Mail.Send', 'Mail.Read']),
    );
  });

  it('Microsoft: a send-only mailer does not ask to read mail; default directory is common', async () => {
    const url = new URL(
      await oauthClientFor(app('microsoft'), opts).consentUrl({
        type: 'smtp',
        redirectUri: REDIRECT,
        state: 's',
        codeChallenge: newPkce().challenge,
      }),
    );
    expect(url.pathname).toBe('/common/oauth2/v2.0/authorize');
    const scopes = url.searchParams.get('scope')!.split(' ');
    expect(scopes).toContain('Mail.Send');
    expect(scopes).not.toContain('Mail.Read');
  });
});
