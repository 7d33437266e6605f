/** Unit tests sit beside the code (src/**\/*.test.ts); integration tests in test/ folders run against real servers. */
const transform = { '^.+\\.ts$': ['ts-jest', { diagnostics: false }] };
// .stryker-tmp holds the sandbox copies of `pnpm test:mutation`; jest must not see them.
const common = {
  testEnvironment: 'node',
  transform,
  moduleFileExtensions: ['ts', 'js', 'json'],
  modulePathIgnorePatterns: ['<rootDir>/.stryker-tmp'],
};

module.exports = {
  testTimeout: 60000,
  reporters: ['default', '<rootDir>/test/support/summary-reporter.js'],
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/{libs,services}/*/src/**/*.test.ts'] },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/{libs,services}/*/test/**/*.test.ts', '<rootDir>/test/**/*.test.ts'],
    },
  ],
};
