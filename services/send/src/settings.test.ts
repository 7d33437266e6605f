import { ConfigError, configFrom, loadConfig } from '@mailyard/platform';
import { retryDelayMs, sendSettings } from './settings';

describe('sendSettings', () => {
  it('keeps the documented defaults', () => {
    const s = sendSettings(loadConfig({}));
    expect(s).toMatchObject({
      maxAttempts: 5,
      retryDelaysS: [60, 300, 1800, 7200],
      mxPort: 25,
      concurrency: 64,
      smtpTimeoutMs: 30_000,
      mxConnections: 2,
      poolConnections: 8,
      mxDeliveryTimeoutMs: 300_000,
      inflightBytes: 256 * 1024 * 1024,
      phishingBudgetMs: 2_000,
      phishingMaxLinks: 10_000,
      phishingBlocklist: [],
      mxAllowPrivateHosts: false,
    });
    expect(s.relayUrl).toBeUndefined();
  });

  it('reads its variables from the environment the Config came from', () => {
    const s = sendSettings(
      configFrom({
        SEND_MAX_ATTEMPTS: '3',
        SEND_RETRY_DELAYS: '1, 2.5',
        PHISHING_BLOCKLIST: 'Evil.Example',
        SMTP_RELAY_URL: 'smtp://relay:25',
      }),
    );
    expect(s).toMatchObject({
      maxAttempts: 3,
      retryDelaysS: [1, 2.5],
      phishingBlocklist: ['evil.example'],
      relayUrl: 'smtp://relay:25',
    });
  });

  it('reads the provider variables (OAuth mailers) with their defaults', () => {
    expect(sendSettings(loadConfig({})).providers).toMatchObject({
      GMAIL_API_URL: 'https://gmail.googleapis.com/',
      MICROSOFT_GRAPH_URL: 'https://graph.microsoft.com',
      GOOGLE_OAUTH_URL: 'https://oauth2.googleapis.com',
      MICROSOFT_LOGIN_URL: 'https://login.microsoftonline.com',
      OAUTH_REFRESH_AHEAD_S: 300,
    });
    const s = sendSettings(
      configFrom({
        GMAIL_API_URL: 'https://127.0.0.1:8443/',
        MICROSOFT_GRAPH_URL: 'https://127.0.0.1:9443',
        GOOGLE_CLIENT_ID: 'id',
        GOOGLE_CLIENT_SECRET: 'secret',
      }),
    );
    expect(s.providers).toMatchObject({
      GMAIL_API_URL: 'https://127.0.0.1:8443/',
      MICROSOFT_GRAPH_URL: 'https://127.0.0.1:9443',
      GOOGLE_CLIENT_ID: 'id',
      GOOGLE_CLIENT_SECRET: 'secret',
    });
  });

  it('refuses half a deployment app, as the gateway does', () => {
    expect(() => sendSettings(loadConfig({ MICROSOFT_CLIENT_ID: 'id' }))).toThrow(
      'MICROSOFT_CLIENT_SECRET must be set together with MICROSOFT_CLIENT_ID',
    );
    expect(() => sendSettings(loadConfig({ GMAIL_API_URL: 'ftp://gmail' }))).toThrow(/GMAIL_API_URL/);
  });

  it.each([
    [
      'SEND_MAX_ATTEMPTS',
      'many',
      'Invalid configuration: SEND_MAX_ATTEMPTS must be a positive integer (got "many")',
    ],
    [
      'SEND_RETRY_DELAYS',
      '1,soon',
      'Invalid configuration: SEND_RETRY_DELAYS must be a comma-separated list of seconds (numbers >= 0) (got "1,soon")',
    ],
    [
      'MX_PORT',
      '70000',
      'Invalid configuration: MX_PORT must be a port number from 0 to 65535 (got "70000")',
    ],
    [
      'PHISHING_BLOCKLIST',
      'a b',
      'Invalid configuration: PHISHING_BLOCKLIST must be a comma-separated list of domain names (got "a b")',
    ],
    [
      'SMTP_RELAY_URL',
      'http://relay',
      'Invalid configuration: SMTP_RELAY_URL must be a URL starting with smtp:// or smtps://',
    ],
  ])('a bad %s is one clear line', (name, value, line) => {
    const config = loadConfig({ [name]: value });
    expect(() => sendSettings(config)).toThrow(new ConfigError(line));
  });
});

describe('retryDelayMs', () => {
  const s = { retryDelaysS: [60, 300, 1800, 7200] };

  it('waits SEND_RETRY_DELAYS[attempt - 1] seconds before the next attempt', () => {
    expect([1, 2, 3, 4].map((attempt) => retryDelayMs(s, attempt))).toEqual([
      60_000, 300_000, 1_800_000, 7_200_000,
    ]);
  });

  it('repeats the last value when the list is shorter than the attempts', () => {
    expect([5, 6, 50].map((attempt) => retryDelayMs(s, attempt))).toEqual([7_200_000, 7_200_000, 7_200_000]);
    expect([1, 2, 3].map((attempt) => retryDelayMs({ retryDelaysS: [0.5, 1.5] }, attempt))).toEqual([
      500, 1500, 1500,
    ]);
  });

  it('takes fractions of seconds and zero as given', () => {
    expect(retryDelayMs({ retryDelaysS: [0.2] }, 1)).toBe(200);
    expect(retryDelayMs({ retryDelaysS: [0.0004] }, 1)).toBe(0);
    expect(retryDelayMs({ retryDelaysS: [0.0006] }, 1)).toBe(1);
    expect(retryDelayMs({ retryDelaysS: [0, 5] }, 1)).toBe(0);
    expect(retryDelayMs({ retryDelaysS: [0, 5] }, 2)).toBe(5000);
  });

  it('falls back to 60 s for an empty list', () => {
    expect(retryDelayMs({ retryDelaysS: [] }, 1)).toBe(60_000);
    expect(retryDelayMs({ retryDelaysS: [] }, 3)).toBe(60_000);
  });

  it('reads the list from SEND_RETRY_DELAYS (default 60,300,1800,7200)', () => {
    expect(sendSettings(configFrom({})).retryDelaysS).toEqual([60, 300, 1800, 7200]);
    const custom = sendSettings(configFrom({ SEND_RETRY_DELAYS: '1,2.5' }));
    expect([1, 2, 3].map((attempt) => retryDelayMs(custom, attempt))).toEqual([1000, 2500, 2500]);
  });
});
