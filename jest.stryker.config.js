/**
 * Jest config for mutation testing (stryker.config.json): only the pure unit tests beside the
 * policy modules Stryker mutates. They need no servers and no --experimental-vm-modules.
 * Add a module: list it in stryker.config.json "mutate" and its unit test here.
 */
module.exports = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': ['ts-jest', { diagnostics: false }] },
  moduleFileExtensions: ['ts', 'js', 'json'],
  testMatch: [
    '<rootDir>/services/gateway/src/rate-limit/rate-limit.test.ts',
    '<rootDir>/libs/contracts/src/mailers/capabilities.test.ts',
    '<rootDir>/services/send/src/settings.test.ts',
    '<rootDir>/libs/providers/src/smtp/classify-smtp-error.test.ts',
    '<rootDir>/services/send/src/phishing.test.ts',
    '<rootDir>/services/send/src/render.test.ts',
    '<rootDir>/libs/platform/src/net/address-policy.test.ts',
    '<rootDir>/libs/platform/src/tracking/link-token.test.ts',
    '<rootDir>/libs/platform/src/retry/backoff.test.ts',
    '<rootDir>/libs/providers/src/oauth/state.test.ts',
    '<rootDir>/services/send/src/phishing-budget.test.ts',
    '<rootDir>/libs/contracts/src/validation/webhook-headers.test.ts',
    '<rootDir>/libs/contracts/src/validation/credential-destination.test.ts',
    '<rootDir>/services/inbound-smtp/src/acceptance.test.ts',
  ],
};
