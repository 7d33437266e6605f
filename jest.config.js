/** Unit tests sit beside the code (src/**\/*.test.ts); integration tests in test/ folders run against real servers. */
const transform = { '^.+\\.ts$': ['ts-jest', { diagnostics: false }] };
// .stryker-tmp holds the sandbox copies of `pnpm test:mutation`; jest must not see them.
const common = {
  testEnvironment: 'node',
  transform,
  moduleFileExtensions: ['ts', 'js', 'json'],
  modulePathIgnorePatterns: ['<rootDir>/.stryker-tmp'],
};

/**
 * Files that stop and restart the shared RabbitMQ: in a project of their own, so they never run
 * while other files use the broker. `pnpm test:jest` runs them after the rest, one at a time
 * (scripts/test-jest.sh); `pnpm test` runs everything with --runInBand anyway.
 */
const BROKER_RESTART = ['bus-amqp-reconnect', 'outbox-relay'];

module.exports = {
  testTimeout: 60000,
  reporters: ['default', '<rootDir>/test/support/summary-reporter.js'],
  projects: [
    {
      ...common,
      displayName: 'unit',
      testMatch: [
        '<rootDir>/{libs,services}/*/src/**/*.test.ts',
        '<rootDir>/bench/{support,floors}/*.test.ts',
      ],
    },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/{libs,services}/*/test/**/*.test.ts', '<rootDir>/test/**/*.test.ts'],
      testPathIgnorePatterns: [`/libs/platform/test/(${BROKER_RESTART.join('|')})\\.test\\.ts$`],
    },
    {
      ...common,
      displayName: 'broker-restart',
      testMatch: BROKER_RESTART.map((f) => `<rootDir>/libs/platform/test/${f}.test.ts`),
    },
  ],
};
