import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '@mailyard/platform';
import { inboundSettings } from './settings';

const settings = (env: Record<string, string>) => inboundSettings(loadConfig(env), env);

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
    });
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
      expect(missing).toThrow(`INBOUND_TLS_KEY: cannot read ${join(dir, 'absent.key')} (ENOENT)`);
      expect(() => settings({ INBOUND_TLS_CERT: join(dir, 'tls.crt') })).toThrow(ConfigError);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
