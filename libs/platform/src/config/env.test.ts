import { z } from 'zod';
import { ConfigError, EnvSchema, bounceDomain, loadConfig, parseSettings } from './env';
import { fileContents, flagOn, positiveInt, setTogether } from './fields';

describe('loadConfig (the core settings)', () => {
  it('applies defaults for an empty environment', () => {
    const c = loadConfig({});
    expect(c.PORT).toBe(3000);
    expect(c.DATABASE_URL).toBeUndefined();
    expect(c.DNS_TRIES).toBe(2);
    expect(c.WEBHOOK_ALLOW_INSECURE).toBe(false);
  });

  it('coerces and validates values', () => {
    const c = loadConfig({ PORT: '8080', WEBHOOK_ALLOW_INSECURE: '1', DATABASE_URL: 'postgres://x@h/db' });
    expect(c.PORT).toBe(8080);
    expect(c.WEBHOOK_ALLOW_INSECURE).toBe(true);
  });

  it('knows no service variables: those are parsed by each service from config.env', () => {
    const core = Object.keys(EnvSchema.shape);
    for (const prefix of [
      'SEND_',
      'PHISHING_',
      'DOMAIN_CHECK_',
      'SMTP_VERIFY_',
      'RATE_LIMIT_',
      'WEBHOOK_BATCH',
    ])
      expect(core.filter((k) => k.startsWith(prefix))).toEqual([]);
    const c = loadConfig({ SEND_MAX_ATTEMPTS: 'not checked here', PORT: '' });
    expect(c.env.SEND_MAX_ATTEMPTS).toBe('not checked here');
    expect('PORT' in c.env).toBe(false); // empty = unset: the default applies
  });

  it('fails with one line naming the variable', () => {
    expect(() => loadConfig({ PORT: 'abc' })).toThrow(ConfigError);
    expect(() => loadConfig({ PORT: 'abc' })).toThrow(/^Invalid configuration: PORT .*\(got "abc"\)$/);
    expect(() => loadConfig({ AMQP_URL: 'http://x' })).toThrow(
      /^Invalid configuration: AMQP_URL must be a URL starting with amqp:\/\//,
    );
    expect(() => loadConfig({ LOG_LEVEL: 'loud' })).toThrow(/LOG_LEVEL/);
  });
});

describe('parseSettings (a service schema)', () => {
  const schema = z.object({
    THING_API_KEY: z.string().min(16, 'must be at least 16 characters').optional(),
    THING_N: positiveInt(3),
  });

  it('parses with defaults', () => {
    expect(parseSettings(schema, {})).toEqual({ THING_N: 3 });
  });

  it('fails with one line and never echoes secret values', () => {
    expect(() => parseSettings(schema, { THING_N: '0' })).toThrow(
      new ConfigError('Invalid configuration: THING_N must be a positive integer (got "0")'),
    );
    try {
      parseSettings(schema, { THING_API_KEY: 'short' });
      throw new Error('expected failure');
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as Error).message).toBe(
        'Invalid configuration: THING_API_KEY must be at least 16 characters',
      );
    }
  });

  it('reports settings of a pair and files read at start in the same one line', () => {
    const paired = z
      .object({ THING_CERT: fileContents.optional(), THING_CHAIN: z.string().optional(), THING_ON: flagOn })
      .superRefine(setTogether([['THING_CERT', 'THING_CHAIN']]));
    expect(parseSettings(paired, {})).toEqual({ THING_ON: true });
    expect(parseSettings(paired, { THING_ON: 'false' }).THING_ON).toBe(false);
    // The unset variable is named; no "(got ...)" for it.
    expect(() => parseSettings(paired, { THING_CHAIN: '/c' })).toThrow(
      new ConfigError('Invalid configuration: THING_CERT must be set together with THING_CHAIN'),
    );
    expect(() => parseSettings(paired, { THING_CERT: '/nonexistent/cert.pem', THING_CHAIN: '/c' })).toThrow(
      new ConfigError(
        'Invalid configuration: THING_CERT cannot read /nonexistent/cert.pem (ENOENT) (got "/nonexistent/cert.pem")',
      ),
    );
  });
});

describe('bounceDomain', () => {
  it('is BOUNCE_DOMAIN, else SERVICE_DOMAIN, lowercase', () => {
    expect(bounceDomain(loadConfig({ SERVICE_DOMAIN: 'Mail.Example.com' }))).toBe('mail.example.com');
    expect(bounceDomain(loadConfig({ SERVICE_DOMAIN: 'x.test', BOUNCE_DOMAIN: 'Bounces.X.test' }))).toBe(
      'bounces.x.test',
    );
  });
  it('refuses a value that is not a domain name', () => {
    expect(() => loadConfig({ BOUNCE_DOMAIN: 'not a domain' })).toThrow(
      'Invalid configuration: BOUNCE_DOMAIN must be a domain name (got "not a domain")',
    );
  });
});
