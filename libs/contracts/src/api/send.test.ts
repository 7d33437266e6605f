import { type SendRequest, deliveryCount, isPerRecipient, planCopies, substitutionsFor } from './send';
import { parseSendRequest } from './send-parse';

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

describe('copies with tracking', () => {
  it('gives every recipient its own copy, showing the original To/Cc', () => {
    const req = parse({
      ...base,
      cc: [{ email: 'c@dest.test' }],
      bcc: [{ email: 'b@dest.test' }],
      settings: { open_tracking: { enable: true } },
    });
    const display = [
      { email: 'x@dest.test', name: 'X', type: 'to' },
      { email: 'y@dest.test', type: 'to' },
      { email: 'c@dest.test', type: 'cc' },
    ];
    expect(planCopies(req, 'R')).toEqual([
      { copy_id: 'R.1', recipients: [{ email: 'x@dest.test', name: 'X', type: 'to' }], display },
      { copy_id: 'R.2', recipients: [{ email: 'y@dest.test', type: 'to' }], display },
      { copy_id: 'R.3', recipients: [{ email: 'c@dest.test', type: 'cc' }], display },
      { copy_id: 'R.4', recipients: [{ email: 'b@dest.test', type: 'bcc' }], display },
    ]);
    expect(deliveryCount(req)).toBe(4);
  });

  it('splits each mail-merge copy per recipient with click tracking', () => {
    const req = parse({
      ...base,
      cc: [{ email: 'c@dest.test' }],
      substitutions: { 'x@dest.test': { n: '1' }, 'y@dest.test': { n: '2' } },
      settings: { click_tracking: { enable: true } },
    });
    const copies = planCopies(req, 'R');
    expect(
      copies.map((c) => [c.copy_id, c.recipients.map((r) => r.email), c.display?.map((r) => r.email)]),
    ).toEqual([
      ['R.1', ['x@dest.test'], ['x@dest.test', 'c@dest.test']],
      ['R.2', ['c@dest.test'], ['x@dest.test', 'c@dest.test']],
      ['R.3', ['y@dest.test'], ['y@dest.test', 'c@dest.test']],
      ['R.4', ['c@dest.test'], ['y@dest.test', 'c@dest.test']],
    ]);
    expect(copies).toHaveLength(deliveryCount(req));
  });
});

describe('replyTo', () => {
  it('accepts a bare address and the Name <address> form', () => {
    expect(parse({ ...base, replyTo: 'r@dest.test' }).replyTo).toBe('r@dest.test');
    expect(parse({ ...base, replyTo: 'Support Team <support@dest.test>' }).replyTo).toBe(
      '"Support Team" <support@dest.test>',
    );
    expect(parse({ ...base, replyTo: '"Doe, Jane \\"JD\\"" <jane@dest.test>' }).replyTo).toBe(
      '"Doe, Jane \\"JD\\"" <jane@dest.test>',
    );
    expect(parse({ ...base, replyTo: '<only@dest.test>' }).replyTo).toBe('only@dest.test');
  });

  it('refuses malformed forms and header injection', () => {
    for (const replyTo of ['Name <bad>', 'Name <a@dest.test', 'a <b> <c@dest.test>', 'reply']) {
      expect(parseSendRequest({ ...base, replyTo })).toMatchObject({
        success: false,
        error: 'replyTo must be a valid email address',
      });
    }
    expect(parseSendRequest({ ...base, replyTo: 'Evil\r\nBcc: x@y.test <a@dest.test>' })).toMatchObject({
      success: false,
      error: 'replyTo must not contain line breaks or other control characters',
    });
  });
});

describe('isPerRecipient', () => {
  it('is true when the request names substitutions for any recipient (own keys only)', () => {
    expect(isPerRecipient({})).toBe(false);
    expect(isPerRecipient({ substitutions: {} })).toBe(false);
    expect(isPerRecipient({ substitutions: { 'x@dest.test': {} } })).toBe(true);
    const many = Object.fromEntries(
      Array.from({ length: 1000 }, (_, i) => [`r${i}@dest.test`, { n: `${i}` }]),
    );
    expect(isPerRecipient({ substitutions: many })).toBe(true);
    const inherited = Object.create({ 'x@dest.test': { n: '1' } }) as Record<string, Record<string, string>>;
    expect(isPerRecipient({ substitutions: inherited })).toBe(false);
  });
});
