import { ConfigError, loadConfig } from '@mailyard/platform';
import { backfillSettings } from './settings';

describe('backfillSettings', () => {
  it('keeps the documented defaults', () => {
    expect(backfillSettings(loadConfig({}))).toMatchObject({
      pollMs: 1000,
      concurrency: 4,
      leaseMs: 60_000,
      sliceMs: 7 * 86_400_000,
      retryMax: 8,
      retryBaseMs: 2000,
      imapTimeoutMs: 15_000,
      imapCommandTimeoutMs: 300_000,
      maxMessageBytes: 25 * 1024 * 1024,
      sync: true,
      syncPollMs: 60_000,
      syncLeaseMs: 30_000,
      syncErrorAfter: 3,
      inFlight: 16,
      inFlightBytes: 8 * 1024 * 1024,
    });
  });

  it('reads the environment the Config came from; empty values mean the default (a ConfigMap lists them empty)', () => {
    const s = backfillSettings(
      loadConfig({
        BACKFILL_POLL_MS: '',
        IMAP_SYNC: '',
        BACKFILL_CONCURRENCY: '2',
        IMAP_SYNC_POLL_MS: '500',
      }),
    );
    expect(s).toMatchObject({ pollMs: 1000, sync: true, concurrency: 2, syncPollMs: 500 });
    expect(backfillSettings(loadConfig({ IMAP_SYNC: '0' })).sync).toBe(false);
  });

  it('refuses a bad value with one ConfigError line naming the variable', () => {
    expect(() => backfillSettings(loadConfig({ BACKFILL_POLL_MS: '5' }))).toThrow(ConfigError);
    expect(() => backfillSettings(loadConfig({ IMAP_SYNC: 'maybe' }))).toThrow(/IMAP_SYNC/);
    expect(() => backfillSettings(loadConfig({ IMAP_MAX_MESSAGE_BYTES: '2gb' }))).toThrow(
      /IMAP_MAX_MESSAGE_BYTES/,
    );
    expect(() => backfillSettings(loadConfig({ IMAP_MAX_MESSAGE_BYTES: String(2 ** 30) }))).toThrow(
      /IMAP_MAX_MESSAGE_BYTES/,
    );
    expect(() => backfillSettings(loadConfig({ IMAP_COMMAND_TIMEOUT_MS: '10' }))).toThrow(
      /IMAP_COMMAND_TIMEOUT_MS/,
    );
  });
});
