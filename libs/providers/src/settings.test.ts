import { ConfigError, loadConfig, parseSettings } from '@mailyard/platform';
import { PUBLIC_PROVIDER_ENDPOINTS } from './oauth/types';
import { ProviderEnvSchema, providerEndpoints, providerSettings } from './settings';

describe('provider settings', () => {
  it('default to the public endpoints and the documented lifecycle values', () => {
    const s = providerSettings(loadConfig({}));
    expect(providerEndpoints(s)).toEqual(PUBLIC_PROVIDER_ENDPOINTS);
    expect(s).toMatchObject({
      MICROSOFT_TENANT: 'common',
      OAUTH_REFRESH_AHEAD_S: 300,
      OAUTH_STATE_TTL_S: 600,
      OAUTH_HTTP_TIMEOUT_MS: 10_000,
      OAUTH_REFRESH_WAIT_MS: 15_000,
    });
    expect(s.GOOGLE_CLIENT_ID).toBeUndefined();
  });

  it('point the OAuth endpoints elsewhere (trailing slash dropped); API roots kept as given', () => {
    const s = providerSettings(
      loadConfig({
        GOOGLE_OAUTH_URL: 'https://127.0.0.1:9443/',
        MICROSOFT_LOGIN_URL: 'https://127.0.0.1:9444',
        GMAIL_API_URL: 'http://127.0.0.1:9445/',
      }),
    );
    expect(providerEndpoints(s)).toMatchObject({
      googleOAuthUrl: 'https://127.0.0.1:9443',
      microsoftLoginUrl: 'https://127.0.0.1:9444',
      gmailApiUrl: 'http://127.0.0.1:9445/',
    });
  });

  it.each([
    [{ MICROSOFT_LOGIN_URL: 'http://127.0.0.1:9444' }, 'MICROSOFT_LOGIN_URL must be a https:// base URL'],
    [{ GOOGLE_OAUTH_URL: 'ftp://x' }, 'GOOGLE_OAUTH_URL must be a https:// or http:// base URL'],
    [{ GOOGLE_CLIENT_ID: 'id' }, 'GOOGLE_CLIENT_SECRET must be set together with GOOGLE_CLIENT_ID'],
    [
      { MICROSOFT_CLIENT_SECRET: 's' },
      'MICROSOFT_CLIENT_ID must be set together with MICROSOFT_CLIENT_SECRET',
    ],
    [{ MICROSOFT_TENANT: '../x' }, 'MICROSOFT_TENANT must be a directory id, domain, or common'],
    [{ OAUTH_STATE_TTL_S: '0' }, 'OAUTH_STATE_TTL_S must be a positive integer'],
  ])('refuses %j with one line', (env, message) => {
    expect(() => parseSettings(ProviderEnvSchema, env)).toThrow(ConfigError);
    expect(() => parseSettings(ProviderEnvSchema, env)).toThrow(`Invalid configuration: ${message}`);
  });
});
