import { seededRandom } from '../test-support/seeded-random';
import { BusEnvelopeSchema } from './envelope';
import { isBusEnvelopeFast, sendEmailCommandFast, sendEmailGroupFast } from './fast-check';
import { MAX_COPIES_PER_COMMAND, SendEmailMessageSchema } from './send-command';
import { SendEmailGroupSchema } from './send-command-group';

const rng = seededRandom;

const ABSENT = Symbol('absent');
const RUNS = 6_000;
const strings = ['01J9ZX', 'send.email', 'x', '', ' ', 0, 1, null, undefined, ABSENT, [], {}, true];
const numbers = [
  1,
  2,
  7,
  0,
  -1,
  1.5,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  '1',
  null,
  undefined,
  ABSENT,
  2 ** 53,
];
const optionals = [ABSENT, undefined, 'tn_1', '', '00-abc-def-01', null, 5, {}];
const copyLists = [
  ABSENT,
  ['c1'],
  ['c1', 'c2', 'c3'],
  Array.from({ length: MAX_COPIES_PER_COMMAND }, (_, i) => `c${i}`),
  ABSENT,
  [],
  ['c1', ''],
  ['c1', 2],
  Array.from({ length: MAX_COPIES_PER_COMMAND + 1 }, (_, i) => `c${i}`),
  'c1',
  null,
  undefined,
  { 0: 'c1' },
];
const payloads = [{ a: 1 }, null, undefined, ABSENT, 'text', [1, 2], 0];

function pick<T>(r: () => number, list: readonly T[]): T {
  return list[Math.floor(r() * list.length)]!;
}

/** Mostly the valid first `valid` values, now and then any: values of both kinds. */
function mostly<T>(r: () => number, list: readonly T[], valid: number): T {
  return r() < 0.9 ? pick(r, list.slice(0, valid)) : pick(r, list);
}

function objectOf(r: () => number, fields: Record<string, unknown>): unknown {
  const roll = r();
  if (roll < 0.01) return pick(r, [null, [], 'x', 3, new Date(0), new Map()]);
  const out: Record<string, unknown> = roll < 0.02 ? Object.create(null) : {};
  for (const [k, v] of Object.entries(fields)) if (v !== ABSENT) out[k] = v;
  if (r() < 0.05) out.extra = 'kept by the envelope, dropped from the command';
  return out;
}

describe('bus fast checks agree with their schemas', () => {
  it('isBusEnvelopeFast accepts only envelopes BusEnvelopeSchema accepts, and the common ones', () => {
    const r = rng(14);
    let accepted = 0;
    for (let i = 0; i < RUNS; i++) {
      const v = objectOf(r, {
        id: mostly(r, strings, 3),
        type: mostly(r, strings, 3),
        version: mostly(r, numbers, 3),
        occurred_at: mostly(r, strings, 5),
        traceparent: mostly(r, optionals, 3),
        tenant_id: mostly(r, optionals, 3),
        payload: pick(r, payloads),
      });
      const zod = BusEnvelopeSchema.safeParse(v).success;
      if (isBusEnvelopeFast(v)) {
        accepted++;
        expect({ v, zod }).toEqual({ v, zod: true });
      }
    }
    // Not a check that declines everything: most generated envelopes are valid and decided here.
    expect(accepted).toBeGreaterThan(RUNS / 3);
  });

  it('sendEmailCommandFast returns what SendEmailMessageSchema returns, or leaves it to the schema', () => {
    const r = rng(41);
    let accepted = 0;
    let multi = 0;
    for (let i = 0; i < RUNS; i++) {
      const v = objectOf(r, {
        ref_id: mostly(r, strings, 3),
        tenant_id: mostly(r, strings, 3),
        copy_id: mostly(r, strings, 3),
        copy_ids: mostly(r, copyLists, 5),
        attempt: mostly(r, numbers, 3),
      });
      const fast = sendEmailCommandFast(v);
      if (fast === undefined) continue;
      accepted++;
      if ('copy_ids' in fast) multi++;
      const zod = SendEmailMessageSchema.safeParse(v);
      expect(zod.success).toBe(true);
      expect(Object.keys(fast)).toEqual(Object.keys(zod.data!));
      expect(fast).toEqual(zod.data);
    }
    expect(accepted).toBeGreaterThan(RUNS / 3);
    // Both shapes are decided here, not only the single-copy one.
    expect(multi).toBeGreaterThan(RUNS / 10);
    expect(accepted - multi).toBeGreaterThan(RUNS / 10);
  });

  it('sendEmailGroupFast returns what SendEmailGroupSchema returns, or leaves it to the schema', () => {
    const r = rng(77);
    // Valid first (small lists, so several items fit under MAX_COPIES_PER_COMMAND), then invalid.
    const groupCopyLists = copyLists.slice(1, 3).concat(copyLists.slice(3));
    const item = () =>
      objectOf(r, {
        tenant_id: mostly(r, strings, 3),
        ref_id: mostly(r, strings, 3),
        copy_ids: mostly(r, groupCopyLists, 2),
        traceparent: mostly(r, optionals, 3),
      });
    const itemLists = () =>
      pick(r, [
        Array.from({ length: 1 + Math.floor(r() * 4) }, item),
        Array.from({ length: 1 + Math.floor(r() * 4) }, item),
        // Many items of few copies: over MAX_COPIES_PER_COMMAND in total now and then.
        Array.from({ length: 330 + Math.floor(r() * 20) }, () => ({
          tenant_id: 't',
          ref_id: 'r',
          copy_ids: ['a', 'b', 'c'],
        })),
        [],
        null,
        ABSENT,
        { 0: {} },
      ]);
    let accepted = 0;
    let rejectedTooMany = 0;
    for (let i = 0; i < RUNS; i++) {
      const v = objectOf(r, { sends: itemLists(), attempt: mostly(r, numbers, 3) });
      const fast = sendEmailGroupFast(v);
      const zod = SendEmailGroupSchema.safeParse(v);
      if (fast === undefined) {
        if (!zod.success && zod.error.issues.some((x) => /at most/.test(x.message))) rejectedTooMany++;
        continue;
      }
      accepted++;
      expect(zod.success).toBe(true);
      expect(JSON.stringify(fast)).toBe(JSON.stringify(zod.data));
    }
    expect(accepted).toBeGreaterThan(RUNS / 10);
    expect(rejectedTooMany).toBeGreaterThan(0);
  });
});
