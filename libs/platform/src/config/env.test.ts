import { ConfigError, loadConfig } from './env';

describe('loadConfig', () => {
  it('applies defaults for an empty environment', () => {
    const c = loadConfig({});
    expect(c.PORT).toBe(3000);
    expect(c.DATABASE_URL).toBeUndefined();
    expect(c.RATE_LIMIT_STANDARD).toBe(100);
    expect(c.RATE_LIMIT_ENTERPRISE).toBe(1000);
    expect(c.WEBHOOK_ALLOW_INSECURE).toBe(false);
  });

  it('coerces and validates values', () => {
    const c = loadConfig({ PORT: '8080', WEBHOOK_ALLOW_INSECURE: '1', DATABASE_URL: 'postgres://x@h/db' });
    expect(c.PORT).toBe(8080);
    expect(c.WEBHOOK_ALLOW_INSECURE).toBe(true);
  });

  it('fails with one line naming the variable', () => {
    expect(() => loadConfig({ PORT: 'abc' })).toThrow(ConfigError);
    expect(() => loadConfig({ PORT: 'abc' })).toThrow(/^Invalid configuration: PORT .*\(got "abc"\)$/);
    expect(() => loadConfig({ AMQP_URL: 'http://x' })).toThrow(
      /^Invalid configuration: AMQP_URL must be a URL starting with amqp:\/\//,
    );
    expect(() => loadConfig({ LOG_LEVEL: 'loud' })).toThrow(/LOG_LEVEL/);
  });

  it('never echoes secret values', () => {
    try {
      loadConfig({ ADMIN_API_KEY: 'short' });
      throw new Error('expected failure');
    } catch (err) {
      expect((err as Error).message).toMatch(/ADMIN_API_KEY/);
      expect((err as Error).message).not.toContain('short"');
    }
  });
});
