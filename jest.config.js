/** Unit tests sit beside the code (src/**\/*.test.ts); integration tests in test/ folders run against real servers. */
const transform = { '^.+\\.ts$': ['ts-jest', { diagnostics: false }] };
const common = { testEnvironment: 'node', transform, moduleFileExtensions: ['ts', 'js', 'json'] };

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
