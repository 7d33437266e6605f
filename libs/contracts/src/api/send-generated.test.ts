import { seededRandom } from '../test-support/seeded-random';
/**
 * The send schema on generated payloads (valid and not, seeded: the same every run): what it
 * returns for a valid payload is what the send pipeline reads (addresses normalized, substitutions
 * keyed by address, content items and recipients without unknown fields, settings explicit and
 * last, optional fields given as null present as undefined), and every invalid one is refused
 * with a field message.
 */
import { addressKey, parseAddress } from '../validation/address';
import { SendRequestSchema } from './send';
import { parseSendRequest } from './send-parse';

/** The same payloads every run. */
const rng = seededRandom;

const RUNS = 8_000;
const ABSENT = Symbol('absent');

const emails = [
  'a@example.com',
  'User.Name@Example.COM',
  'x@dest.test',
  'üser@bücher.example',
  'b@xn--bcher-kva.example',
  '"quoted local"@example.com',
  'bad',
  '',
  'a@@b',
  'line\nbreak@example.com',
  ' a@example.com',
  42,
  null,
];
const strings = [
  's',
  'Subject {{name}}',
  '',
  '   ',
  'tab\there',
  'a\rb',
  '\u0085',
  'x'.repeat(256),
  'x'.repeat(999),
  'ü',
  7,
  null,
];
const names = [ABSENT, 'Jane', '', null, 'Line\nBreak', 'n'.repeat(256), 'n'.repeat(257), 3, undefined];

function pick<T>(r: () => number, list: readonly T[]): T {
  return list[Math.floor(r() * list.length)]!;
}

/** Mostly the first (valid) values of `list`, now and then any of them: payloads of both kinds. */
function mostly<T>(r: () => number, list: readonly T[], valid: number): T {
  return r() < 0.97 ? pick(r, list.slice(0, valid)) : pick(r, list);
}

function recipient(r: () => number): unknown {
  if (r() < 0.01) return pick(r, [null, 'a@example.com', [], 5]);
  const out: Record<string, unknown> = {};
  const email = r() < 0.01 ? ABSENT : mostly(r, emails, 6);
  if (email !== ABSENT) out.email = email;
  const name = mostly(r, names, 5);
  if (name !== ABSENT) out.name = name;
  if (r() < 0.1) out.extra = 'dropped';
  return out;
}

function list(r: () => number, min: number, max: number): unknown[] {
  const n = min + Math.floor(r() * (max - min + 1));
  return Array.from({ length: n }, () => recipient(r));
}

function content(r: () => number): unknown {
  if (r() < 0.02) return pick(r, [[], null, 'text', {}]);
  const items = [
    { type: 'text/html', value: '<p>Hi {{name}}</p>' },
    { type: 'text/plain', value: 'Hi {{name}}' },
    { type: 'text/plain', value: 'again' },
    { type: 'text/markdown', value: 'x' },
    { type: 'text/html', value: 3 },
    { type: 'text/html', value: 'extra key', extra: true },
    null,
  ];
  const n = 1 + Math.floor(r() * 2);
  return Array.from({ length: n }, (_, i) => (r() < 0.95 ? items[i]! : pick(r, items)));
}

function substitutions(r: () => number): unknown {
  return mostly(
    r,
    [
      { 'a@example.com': { name: 'A', n: 1, ok: true, none: null } },
      { 'X@Dest.Test': { name: 'X' } },
      { 'x@dest.test': { v: 'a' }, 'X@DEST.TEST': { v: 'b' } },
      { 'not an address': { v: 'a' } },
      { 'a@example.com': { nested: { no: 1 } } },
      { 'a@example.com': 'not an object' },
      {},
      [],
      'x',
    ],
    3,
  );
}

function settings(r: () => number): unknown {
  return mostly(
    r,
    [
      {},
      { open_tracking: { enable: true } },
      { click_tracking: { enable: false }, open_tracking: null },
      { open_tracking: { enable: 'yes' } },
      { open_tracking: true },
      'on',
      [],
    ],
    3,
  );
}

function customArgs(r: () => number): unknown {
  return mostly(
    r,
    [
      { bench: true, i: 1 },
      { nested: { a: [1, 2] }, s: 'x' },
      {},
      { big: 'x'.repeat(11_000) },
      [1, 2],
      'str',
      JSON.parse('{"__proto__": {"polluted": 1}, "a": 1}'),
    ],
    3,
  );
}

/** Each field absent, null, or one of its values (valid or not). */
function payload(r: () => number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const field = (key: string, p: number, make: () => unknown) => {
    const roll = r();
    if (roll < p) out[key] = make();
    else if (roll < p + 0.01) out[key] = null;
  };
  field('from', 0.99, () => recipient(r));
  field('to', 0.99, () => (r() < 0.02 ? pick(r, [[], 'x', {}]) : list(r, 1, 3)));
  field('cc', 0.2, () => list(r, 0, 2));
  field('bcc', 0.2, () => list(r, 0, 2));
  field('mailer_id', 0.99, () => mostly(r, ['mlr_1', ...strings], 2));
  field('subject', 0.8, () => mostly(r, strings, 2));
  field('content', 0.8, () => content(r));
  field('template_id', 0.2, () => mostly(r, ['tmpl_1', ...strings], 3));
  field('substitutions', 0.3, () => substitutions(r));
  field('replyTo', 0.02, () => 'Jane <jane@example.com>');
  field('headers', 0.02, () => ({ 'X-Campaign': 'c' }));
  field('attachments', 0.02, () => [{ filename: 'a.txt', content: 'aGk=' }]);
  field('settings', 0.3, () => settings(r));
  field('campaign_id', 0.2, () => mostly(r, ['camp', ...strings], 3));
  field('custom_args', 0.3, () => customArgs(r));
  if (r() < 0.1) out.unknown_field = 1;
  return out;
}

const FIELDS = [
  'from',
  'to',
  'cc',
  'bcc',
  'mailer_id',
  'subject',
  'content',
  'template_id',
  'substitutions',
  'replyTo',
  'headers',
  'attachments',
  'campaign_id',
  'custom_args',
  'settings',
];

function expectNormalizedRecipient(r: { email: string; name?: string }) {
  expect(parseAddress(r.email)?.email).toBe(r.email);
  expect(Object.keys(r).every((k) => k === 'email' || k === 'name')).toBe(true);
}

describe('SendRequestSchema on generated payloads', () => {
  it('returns what the send pipeline reads for every valid payload, and a field message for every invalid one', () => {
    const r = rng(20261126);
    let valid = 0;
    for (let i = 0; i < RUNS; i++) {
      const input = payload(r);
      const result = SendRequestSchema.safeParse(input);
      if (!result.success) {
        const refused = parseSendRequest(input);
        expect(refused.success).toBe(false);
        if (!refused.success) expect(refused.error).toMatch(/\S/);
        continue;
      }
      valid++;
      const req = result.data;
      // Known fields only, in the schema's order, settings last; a field given (even as null) is present.
      const keys = Object.keys(req);
      expect(keys).toEqual(
        FIELDS.filter((k) => k in input || k === 'settings' || req[k as keyof typeof req] !== undefined),
      );
      for (const k of keys)
        if (k !== 'settings' && input[k] === null) expect(req[k as keyof typeof req]).toBeUndefined();
      for (const rcpt of [req.from, ...req.to, ...(req.cc ?? []), ...(req.bcc ?? [])])
        expectNormalizedRecipient(rcpt);
      for (const c of req.content ?? []) expect(Object.keys(c)).toEqual(['type', 'value']);
      for (const [key, vars] of Object.entries(req.substitutions ?? {})) {
        expect(addressKey(key)).toBe(key);
        for (const v of Object.values(vars)) expect(typeof v).toBe('string');
      }
      expect(typeof req.settings.open_tracking.enable).toBe('boolean');
      expect(typeof req.settings.click_tracking.enable).toBe('boolean');
    }
    // The generator makes both kinds in numbers (else the checks above prove little).
    expect(valid).toBeGreaterThan(1_000);
    expect(RUNS - valid).toBeGreaterThan(5_000);
  });

  it('normalizes the send benchmark payload', () => {
    const body = {
      from: { email: 'news@bench.test', name: 'Bench News' },
      to: [{ email: 'User1@Example.COM', name: 'User 1' }],
      mailer_id: 'mlr_1',
      subject: 'Your weekly digest, {{name}}',
      content: [
        { type: 'text/html', value: '<p>Hello {{name}}</p>' },
        { type: 'text/plain', value: 'Hello {{name}}' },
      ],
      substitutions: { 'User1@Example.COM': { name: 'User 1' } },
      attachments: null,
      custom_args: { bench: true, i: 1 },
    };
    expect(parseSendRequest(body)).toStrictEqual({
      success: true,
      data: {
        from: { email: 'news@bench.test', name: 'Bench News' },
        to: [{ email: 'User1@example.com', name: 'User 1' }],
        mailer_id: 'mlr_1',
        subject: 'Your weekly digest, {{name}}',
        content: body.content,
        substitutions: { 'user1@example.com': { name: 'User 1' } },
        attachments: undefined,
        custom_args: { bench: true, i: 1 },
        settings: { open_tracking: { enable: false }, click_tracking: { enable: false } },
      },
    });
    expect(parseSendRequest({ ...body, to: [{ email: 'bad' }] })).toEqual({
      success: false,
      error: 'to[0].email must be a valid email address',
    });
  });
});
