import { configFrom } from '@mailyard/platform';
import { submissionSettings } from './settings';

const settings = (env: Record<string, string>) => submissionSettings(configFrom(env));

test('defaults: STARTTLS on 2587, no implicit TLS, 25 MiB, 100 recipients, the API budget', () => {
  expect(settings({})).toMatchObject({
    port: 2587,
    tlsPort: null,
    tls: null,
    allowInsecureAuth: false,
    maxBytes: 25 * 1024 * 1024,
    maxRecipients: 100,
    authFailures: 5,
    authFailureWindowMs: 600_000,
    rateLimit: { limits: { standard: 100, enterprise: 1000 }, windowMs: 60_000 },
  });
});

test('bad values are one ConfigError naming the variable', () => {
  expect(() => settings({ SUBMISSION_MAX_RECIPIENTS: '5000' })).toThrow(/SUBMISSION_MAX_RECIPIENTS/);
  expect(() => settings({ SUBMISSION_TLS_CERT: '/nonexistent.pem' })).toThrow(/SUBMISSION_TLS/);
});
