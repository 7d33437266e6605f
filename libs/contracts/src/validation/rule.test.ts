import { z } from 'zod';
import { fields, optional, rule, stringRule } from './rule';

const upper = stringRule((v, ctx) => {
  if (v === '') ctx.addIssue({ code: 'custom', message: `${ctx.path.join('.')} is required` });
  return v.toUpperCase();
});
const plainUpper = z.string().transform((v, ctx) => {
  if (v === '') ctx.addIssue({ code: 'custom', message: `${ctx.path.join('.')} is required` });
  return v.toUpperCase();
});
const count = rule(z.number(), (v, ctx) => {
  if (typeof v !== 'number') {
    ctx.addIssue({ code: 'custom', message: 'not a number', fatal: true });
    return z.NEVER;
  }
  return v + 1;
});
const plainCount = z.unknown().transform((v, ctx) => {
  if (typeof v !== 'number') {
    ctx.addIssue({ code: 'custom', message: 'not a number', fatal: true });
    return z.NEVER;
  }
  return v + 1;
});
const nullish = <T extends z.ZodTypeAny>(s: T) => s.nullish().transform((v) => (v === null ? undefined : v));

const fast = fields({ name: upper, n: optional(count), nested: optional(fields({ a: upper })) });
const plain = z.object({
  name: plainUpper,
  n: nullish(plainCount),
  nested: nullish(z.object({ a: plainUpper })),
});

const outcome = (s: z.ZodTypeAny, input: unknown) => {
  const r = s.safeParse(input);
  return r.success
    ? { ok: true, data: r.data, keys: Object.keys(r.data ?? {}) }
    : { ok: false, issues: r.error.issues.map((i) => ({ code: i.code, path: i.path, message: i.message })) };
};

describe('rule nodes parse as the zod nodes they stand for', () => {
  it.each([
    { name: 'x' },
    { name: 'x', n: 1, extra: true },
    { name: 'x', n: null, nested: null },
    { name: 'x', n: undefined },
    { name: '', n: 2 },
    { name: 5 },
    { name: 'x', n: 'one' },
    { name: 'x', nested: { a: '' } },
    { name: 'x', nested: { a: 'b', z: 1 } },
    { nested: 'no' },
    [],
    null,
    'text',
  ])('%j', (input) => {
    expect(outcome(fast, input)).toEqual(outcome(plain, input));
  });

  it('keeps a key given as null or undefined, drops unknown keys', () => {
    expect(Object.keys(fast.parse({ name: 'a', n: null, other: 1 }))).toEqual(['name', 'n']);
  });
});
