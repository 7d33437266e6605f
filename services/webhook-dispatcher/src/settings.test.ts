import { ConfigError, loadConfig } from '@mailyard/platform';
import { dispatcherSettings } from './settings';

describe('dispatcherSettings', () => {
  it('keeps the documented defaults', () => {
    expect(dispatcherSettings(loadConfig({}))).toMatchObject({
      batchMax: 100,
      batchWaitMs: 200,
      retryDelaysS: [5, 30, 120, 600, 1800, 3600, 7200, 14400, 28800, 30000],
      timeoutMs: 5000,
      endpointConcurrency: 4,
      concurrency: 256,
      pollMs: 1000,
      allowInsecure: false,
      prefetch: 2000,
    });
    expect(dispatcherSettings(loadConfig({ WEBHOOK_BATCH_MAX: '1' })).prefetch).toBe(256);
  });

  it('reads its variables and the shared WEBHOOK_ALLOW_INSECURE', () => {
    const s = dispatcherSettings(loadConfig({ WEBHOOK_BATCH_WAIT_MS: '0', WEBHOOK_ALLOW_INSECURE: 'true' }));
    expect(s).toMatchObject({ batchWaitMs: 0, allowInsecure: true });
  });

  it('a bad value is one clear line', () => {
    expect(() => dispatcherSettings(loadConfig({ WEBHOOK_BATCH_MAX: '-1' }))).toThrow(
      new ConfigError('Invalid configuration: WEBHOOK_BATCH_MAX must be a positive integer (got "-1")'),
    );
  });
});
