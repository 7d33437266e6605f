import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '@mailyard/platform';
import { gatewayConfig, gatewaySettings } from './settings';

const REPO = join(__dirname, '..', '..', '..');

/** Every value the repository's examples, manifests and docs give `name` (`NAME=value`, `NAME: value`). */
function documentedValues(name: string): string[] {
  const files = [
    '.env.example',
    'docker-compose.yml',
    'README.md',
    ...readdirSync(join(REPO, 'k8s'), { recursive: true, encoding: 'utf8' }).map((f) => join('k8s', f)),
    ...readdirSync(join(REPO, 'docs'), { recursive: true, encoding: 'utf8' }).map((f) => join('docs', f)),
  ].filter((f) => /\.(env|example|ya?ml|md)$/.test(f));
  const values = files.flatMap((f) =>
    [...readFileSync(join(REPO, f), 'utf8').matchAll(new RegExp(`\\b${name}[=:] *([^\\s\`'"#]+)`, 'g'))].map(
      (m) => m[1]!,
    ),
  );
  return [...new Set(values)];
}

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
    // The examples' placeholders (k8s/base/secrets.env, .env.example) and their variants.
    ...[
      'REPLACE_ME_admin_key_min_16_chars',
      'change-me-admin-key-at-least-16-chars',
      'my-key-CHANGEME-0123456789',
      'Replace me with a long key please',
      '<a key of at least 16 characters>',
    ].flatMap((value) =>
      ['ADMIN_API_KEY', 'BOOTSTRAP_API_KEY'].map((name) => [
        name,
        value,
        `Invalid configuration: ${name} is a placeholder from the examples: set a random value of your own`,
      ]),
    ),
  ])('a bad %s is one clear line (%s)', (name, value, line) => {
    expect(() => gatewaySettings(loadConfig({ [name]: value }))).toThrow(new ConfigError(line));
  });

  it('accepts keys of 16 characters and more that are no placeholder', () => {
    const key = 'k'.repeat(16);
    expect(
      gatewaySettings(loadConfig({ ADMIN_API_KEY: key, BOOTSTRAP_API_KEY: `myk_${key}` })),
    ).toMatchObject({
      ADMIN_API_KEY: key,
      BOOTSTRAP_API_KEY: `myk_${key}`,
    });
  });

  it.each(['ADMIN_API_KEY', 'BOOTSTRAP_API_KEY'])(
    'refuses every value the examples, manifests and docs give %s',
    (name) => {
      const values = documentedValues(name);
      if (name === 'ADMIN_API_KEY')
        expect(values).toEqual(
          expect.arrayContaining([
            'REPLACE_ME_admin_key_min_16_chars',
            'change-me-admin-key-at-least-16-chars',
          ]),
        );
      for (const value of values)
        expect(() => gatewaySettings(loadConfig({ [name]: value }))).toThrow(ConfigError);
    },
  );

  it('refuses every value the examples, manifests and docs give SECRET_KEY', () => {
    const values = documentedValues('SECRET_KEY');
    expect(values).toEqual(
      expect.arrayContaining(['REPLACE_ME_openssl_rand_base64_32', 'change-me-openssl-rand-base64-32']),
    );
    for (const value of values)
      expect(() => loadConfig({ SECRET_KEY: value })).toThrow(
        new ConfigError(
          'Invalid configuration: SECRET_KEY is a placeholder from the examples: set a random value of your own',
        ),
      );
  });
});
