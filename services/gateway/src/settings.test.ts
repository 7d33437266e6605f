import { ConfigError, loadConfig } from '@mailyard/platform';
import { gatewayConfig, gatewaySettings } from './settings';

describe('gatewaySettings', () => {
  it('keeps the documented defaults', () => {
    expect(gatewaySettings(loadConfig({}))).toMatchObject({
      BOOTSTRAP_TIER: 'standard',
      RATE_LIMIT_STANDARD: 100,
      RATE_LIMIT_ENTERPRISE: 1000,
      RATE_LIMIT_WINDOW_SECONDS: 60,
      API_KEY_CACHE_MS: 5000,
      HTTP_BODY_LIMIT: '1mb',
      HTTP_SEND_BODY_LIMIT: '42mb',
      WEBHOOK_CONNECT_TIMEOUT_MS: 5000,
      WEBHOOK_REPLAY_LIMIT: 5,
      WEBHOOK_REPLAY_WINDOW_SECONDS: 60,
      DKIM_SELECTOR: 'mailyard',
      SENDING_IPS: [],
      DOMAIN_CHECK_TICK_MS: 60_000,
      DOMAIN_CHECK_FIRST_DELAY_S: 300,
      DOMAIN_CHECK_MAX_BACKOFF_S: 21_600,
      DOMAIN_CHECK_UNVERIFIED_WINDOW_S: 259_200,
      DOMAIN_CHECK_VERIFIED_INTERVAL_S: 86_400,
      DOMAIN_CHECK_BATCH: 50,
      SMTP_VERIFY_TIMEOUT_MS: 10_000,
      IMAP_VERIFY_TIMEOUT_MS: 10_000,
    });
  });

  it('puts its settings beside the core ones, parsed once per Config', () => {
    const core = loadConfig({ PORT: '8080', RATE_LIMIT_STANDARD: '5' });
    const full = gatewayConfig(core);
    expect(full).toMatchObject({ PORT: 8080, RATE_LIMIT_STANDARD: 5 });
    expect(gatewayConfig(core)).toBe(full);
    expect(gatewayConfig(full)).toBe(full);
  });

  it.each([
    [
      'DOMAIN_CHECK_TICK_MS',
      'soon',
      'Invalid configuration: DOMAIN_CHECK_TICK_MS must be a positive integer (got "soon")',
    ],
    [
      'SMTP_VERIFY_TIMEOUT_MS',
      '0',
      'Invalid configuration: SMTP_VERIFY_TIMEOUT_MS must be a positive integer (got "0")',
    ],
    [
      'DKIM_SELECTOR',
      'not a host',
      'Invalid configuration: DKIM_SELECTOR must be a host name (got "not a host")',
    ],
    [
      'HTTP_BODY_LIMIT',
      'big',
      'Invalid configuration: HTTP_BODY_LIMIT must be a byte size such as 1mb, 512kb or 1048576 (got "big")',
    ],
    // A secret is named, never echoed.
    ['ADMIN_API_KEY', 'short', 'Invalid configuration: ADMIN_API_KEY must be at least 16 characters'],
  ])('a bad %s is one clear line', (name, value, line) => {
    expect(() => gatewaySettings(loadConfig({ [name]: value }))).toThrow(new ConfigError(line));
  });
});
