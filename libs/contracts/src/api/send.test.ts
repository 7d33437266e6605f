import { type SendRequest, deliveryCount, parseSendRequest, planCopies, substitutionsFor } from './send';

const base = {
  from: { email: 'a@example.com' },
  to: [{ email: 'x@dest.test', name: 'X' }, { email: 'y@dest.test' }],
  mailer_id: 'domain_1',
  subject: 's',
  content: [{ type: 'text/plain', value: 'v' }],
};
const parse = (body: unknown): SendRequest => {
  const r = parseSendRequest(body);
  if (!r.success) throw new Error(r.error);
  return r.data;
};

describe('parseSendRequest', () => {
  it('normalizes: defaults, null as absent, unknown fields dropped', () => {
    const req = parse({ ...base, bcc: null, extra: 1, settings: { click_tracking: { enable: true } } });
    expect(req).toEqual({
      ...base,
      settings: { open_tracking: { enable: false }, click_tracking: { enable: true } },
    });
  });

  it('reports the number of problems and where the first is', () => {
    const r = parseSendRequest({ to: [{ email: 'bad' }] });
    expect(r).toEqual({ success: false, error: 'from is required', details: '3 problems; first at from' });
  });
});

describe('copies', () => {
  it('makes one copy for everyone without substitutions', () => {
    const req = parse({
      ...base,
      cc: [{ email: 'c@dest.test' }],
      bcc: [{ email: 'b@dest.test' }],
      substitutions: {},
    });
    expect(planCopies(req, 'R')).toEqual([
      {
        copy_id: 'R.1',
        recipients: [
          { email: 'x@dest.test', name: 'X', type: 'to' },
          { email: 'y@dest.test', type: 'to' },
          { email: 'c@dest.test', type: 'cc' },
          { email: 'b@dest.test', type: 'bcc' },
        ],
      },
    ]);
    expect(deliveryCount(req)).toBe(4);
  });

  it('makes one copy per to recipient with substitutions, cc and bcc on each', () => {
    const req = parse({
      ...base,
      bcc: [{ email: 'b@dest.test' }],
      substitutions: { 'X@Dest.test': { n: 1 } },
    });
    expect(planCopies(req, 'R')).toEqual([
      {
        copy_id: 'R.1',
        recipients: [
          { email: 'x@dest.test', name: 'X', type: 'to' },
          { email: 'b@dest.test', type: 'bcc' },
        ],
      },
      {
        copy_id: 'R.2',
        recipients: [
          { email: 'y@dest.test', type: 'to' },
          { email: 'b@dest.test', type: 'bcc' },
        ],
      },
    ]);
    expect(deliveryCount(req)).toBe(4);
    expect(substitutionsFor(req, 'x@DEST.test')).toEqual({ n: '1' });
    expect(substitutionsFor(req, 'y@dest.test')).toEqual({});
  });

  it('validates substitutions shapes with field names; values become strings', () => {
    const err = (substitutions: unknown) => {
      const r = parseSendRequest({ ...base, substitutions });
      return r.success ? null : r.error;
    };
    expect(err([])).toBe('substitutions must be an object');
    expect(err('x')).toBe('substitutions must be an object');
    expect(err({ 'x@dest.test': [] })).toBe('substitutions.x@dest.test must be an object');
    expect(err({ 'x@dest.test': { a: { b: 1 } } })).toBe(
      'substitutions.x@dest.test.a must be a string, number or boolean',
    );
    expect(err({ nobody: { a: 1 } })).toBe(
      'substitutions keys must be recipient email addresses (got "nobody")',
    );
    const req = parse({ ...base, substitutions: { 'X@Dest.test': { s: 'v', n: 2, b: false, z: null } } });
    expect(req.substitutions).toEqual({ 'x@dest.test': { s: 'v', n: '2', b: 'false', z: '' } });
  });

  it('validates a 100,000-value mail merge (the send route value limit)', () => {
    const to = Array.from({ length: 1000 }, (_, i) => ({ email: `u${i}@dest.test` }));
    const vars = Object.fromEntries(Array.from({ length: 95 }, (_, j) => [`v${j}`, 'value']));
    const substitutions = Object.fromEntries(to.map((r) => [r.email, vars]));
    const req = parse({ ...base, to, substitutions });
    expect(Object.keys(req.substitutions ?? {})).toHaveLength(1000);
  });

  it('refuses two substitution entries for one address', () => {
    const r = parseSendRequest({ ...base, substitutions: { 'x@dest.test': {}, 'X@dest.test': {} } });
    expect(r).toMatchObject({
      success: false,
      error: 'substitutions has more than one entry for X@dest.test',
    });
  });
});
