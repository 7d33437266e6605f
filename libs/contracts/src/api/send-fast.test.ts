import { seededRandom } from '../test-support/seeded-random';
import { SendRequestSchema } from './send';
import { fastSendRequest } from './send-fast';
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

describe('fastSendRequest', () => {
  it('returns what the schema returns for every payload it decides, and decides every valid one it covers', () => {
    const r = rng(20261126);
    let decided = 0;
    let valid = 0;
    for (let i = 0; i < RUNS; i++) {
      const input = payload(r);
      const fast = fastSendRequest(input);
      const schema = SendRequestSchema.safeParse(input);
      if (fast !== undefined) {
        decided++;
        expect(schema.success).toBe(true);
        // Strict: the same keys present (an optional field sent as null is present as undefined).
        expect(fast).toStrictEqual(schema.data);
      }
      // What the fast path leaves to the schema on purpose: these fields, and a `__proto__` key in
      // custom_args (which the schema's record drops).
      const covered =
        ['replyTo', 'headers', 'attachments'].every((k) => input[k] == null) &&
        !(input.custom_args instanceof Object && Object.hasOwn(input.custom_args, '__proto__'));
      if (schema.success && covered) {
        valid++;
        if (fast === undefined) throw new Error(`valid payload left to the schema: ${JSON.stringify(input)}`);
      }
    }
    // The generator makes both kinds in numbers (else the comparison above proves little).
    expect(decided).toBeGreaterThan(1_000);
    expect(valid).toBe(decided);
    expect(RUNS - decided).toBeGreaterThan(5_000);
  });

  it('takes the send benchmark payload, and leaves non-JSON objects and schema-only fields to the schema', () => {
    const body = {
      from: { email: 'news@bench.test', name: 'Bench News' },
      to: [{ email: 'user1@example.com', name: 'User 1' }],
      mailer_id: 'mlr_1',
      subject: 'Your weekly digest, {{name}}',
      content: [
        { type: 'text/html', value: '<p>Hello {{name}}</p>' },
        { type: 'text/plain', value: 'Hello {{name}}' },
      ],
      substitutions: { 'user1@example.com': { name: 'User 1' } },
      custom_args: { bench: true, i: 1 },
    };
    expect(fastSendRequest(body)).toStrictEqual(SendRequestSchema.parse(body));
    expect(fastSendRequest({ ...body, settings: new Date() })).toBeUndefined();
    expect(fastSendRequest({ ...body, attachments: [] })).toBeUndefined();
    expect(fastSendRequest({ ...body, attachments: null })).toStrictEqual(
      SendRequestSchema.parse({ ...body, attachments: null }),
    );
    // Errors still come from the schema, worded as before.
    expect(parseSendRequest({ ...body, to: [{ email: 'bad' }] })).toEqual({
      success: false,
      error: 'to[0].email must be a valid email address',
    });
  });
});
