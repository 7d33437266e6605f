import { REDACTED, redact } from './redact';

describe('redact', () => {
  it('replaces secret-looking keys at any depth', () => {
    const out = redact({
      user: 'a',
      password: 'p',
      nested: { apiKey: 'k', list: [{ authorization: 'Bearer x', ok: 1 }] },
      smtp: { config: { pass: 'x' } },
    });
    expect(out).toEqual({
      user: 'a',
      password: REDACTED,
      nested: { apiKey: REDACTED, list: [{ authorization: REDACTED, ok: 1 }] },
      smtp: { config: { pass: REDACTED } },
    });
  });

  it('keeps errors readable', () => {
    const out = redact({ err: new Error('boom') }) as { err: { message: string } };
    expect(out.err.message).toBe('boom');
  });
});
