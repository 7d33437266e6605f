import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '@mailyard/platform';
import { inboundSettings } from './settings';

const settings = (env: Record<string, string>) => inboundSettings(loadConfig(env));

describe('inboundSettings', () => {
  it('keeps the documented defaults; empty values mean the default', () => {
    expect(settings({ INBOUND_MAX_CLIENTS: '', INBOUND_TLS_CERT: '', INBOUND_TLS_KEY: '' })).toMatchObject({
      port: 2525,
      hostname: 'mailyard.local',
      maxMessageBytes: 25 * 1024 * 1024,
      maxClients: 100,
      maxPerIp: 10,
      socketTimeoutMs: 60_000,
      tls: null,
      greetingDelayMs: 0,
      maxRecipients: 100,
      maxInflightBytes: 4 * 25 * 1024 * 1024,
      sessionTimeoutMs: 600_000,
      dataTimeoutMs: 300_000,
    });
  });

  test('the limits of issue 23: recipients, held bytes, deadlines', () => {
    expect(
      settings({
        INBOUND_MAX_RECIPIENTS: '5',
        INBOUND_MAX_MESSAGE_BYTES: '2048',
        INBOUND_SESSION_TIMEOUT_MS: '1000',
        INBOUND_DATA_TIMEOUT_MS: '2000',
      }),
    ).toMatchObject({
      maxRecipients: 5,
      maxMessageBytes: 2048,
      maxInflightBytes: 4 * 2048, // follows the message size unless set
      sessionTimeoutMs: 1000,
      dataTimeoutMs: 2000,
    });
    expect(settings({ INBOUND_MAX_INFLIGHT_BYTES: '26214400' }).maxInflightBytes).toBe(26_214_400);
    // the budget must hold one message of the largest size
    expect(() => settings({ INBOUND_MAX_INFLIGHT_BYTES: '26214399' })).toThrow(
      'Invalid configuration: INBOUND_MAX_INFLIGHT_BYTES must be at least INBOUND_MAX_MESSAGE_BYTES',
    );
    for (const [name, value] of [
      ['INBOUND_MAX_RECIPIENTS', '0'],
      ['INBOUND_MAX_RECIPIENTS', 'many'],
      ['INBOUND_SESSION_TIMEOUT_MS', '999'],
      ['INBOUND_DATA_TIMEOUT_MS', '-1'],
      ['INBOUND_MAX_INFLIGHT_BYTES', '1.5'],
    ] as const)
      expect(() => settings({ [name]: value })).toThrow(`Invalid configuration: ${name}`);
  });

  it('reads the greeting delay (0 allowed, negative refused)', () => {
    expect(settings({ INBOUND_GREETING_DELAY_MS: '1500' }).greetingDelayMs).toBe(1500);
    expect(() => settings({ INBOUND_GREETING_DELAY_MS: '-1' })).toThrow(ConfigError);
  });

  it('reads the STARTTLS files; a missing one is a ConfigError naming the variable', () => {
    const dir = mkdtempSync(join(tmpdir(), 'inbound-tls-'));
    try {
      writeFileSync(join(dir, 'tls.crt'), 'CERT');
      writeFileSync(join(dir, 'tls.key'), 'KEY');
      const tls = settings({
        INBOUND_TLS_CERT: join(dir, 'tls.crt'),
        INBOUND_TLS_KEY: join(dir, 'tls.key'),
      }).tls;
      expect([String(tls?.cert), String(tls?.key)]).toEqual(['CERT', 'KEY']);
      const missing = () =>
        settings({ INBOUND_TLS_CERT: join(dir, 'tls.crt'), INBOUND_TLS_KEY: join(dir, 'absent.key') });
      expect(missing).toThrow(ConfigError);
      expect(missing).toThrow(
        `Invalid configuration: INBOUND_TLS_KEY cannot read ${join(dir, 'absent.key')} (ENOENT)`,
      );
      expect(() => settings({ INBOUND_TLS_CERT: join(dir, 'tls.crt') })).toThrow(ConfigError);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
