import { seededRandom } from '../test-support/seeded-random';
import { EMAIL_EVENT_TYPES, EmailEventSchema, emptyTracking } from './email-event';
import { fastEmailEvent } from './email-event-fast';

/** The same events every run. */
const rng = seededRandom;

const RUNS = 5_000;
const ABSENT = Symbol('absent');
const pick = <T>(r: () => number, list: readonly T[]): T => list[Math.floor(r() * list.length)]!;

const strings = ['', 'x', 'domain_01J', '<m@x>', 'ü', 7, null, true];
const stamps = [
  '2026-01-01T10:00:00.123456Z',
  '2026-01-01T10:00:00Z',
  '2026-01-01T10:00:00.1Z',
  '2026-01-01 10:00:00Z',
  '2026-01-01T10:00:00+01:00',
  '',
  12,
];
const ints = [ABSENT, 1, 3, 0, -1, 1.5, Number.NaN, '2', null];
const bools = [ABSENT, true, false, 'true', 0, null];
const optionalStrings = [ABSENT, 'x', 'y', '', 5, null];
const argsList = [
  null,
  { n: 1 },
  {},
  { b: { deep: [1, 2] }, 2: 'two', a: 'x' },
  JSON.parse('{"__proto__": {"x": 1}}'),
  [],
  'args',
  ABSENT,
];

function put(o: Record<string, unknown>, key: string, v: unknown) {
  if (v !== ABSENT) o[key] = v;
}

function trackingOf(r: () => number): unknown {
  const roll = r();
  if (roll < 0.05) return null;
  const t: Record<string, unknown> = { ...emptyTracking(), ip: '192.0.2.1', url: 'https://x.test/' };
  if (roll < 0.1) t.bot = 'no';
  else if (roll < 0.15)
    t.city = undefined; // absent after the JSON round trip
  else if (roll < 0.2) t.extra = 'dropped';
  else if (roll < 0.25) return Object.fromEntries(Object.entries(t).reverse());
  return t;
}

/** An event, mostly valid, with keys in random orders and stray keys now and then. */
function generated(r: () => number): unknown {
  const event = r() < 0.95 ? pick(r, EMAIL_EVENT_TYPES) : pick(r, ['MAIL_SENT', '', 3]);
  const d: Record<string, unknown> = {};
  put(d, 'ref_id', r() < 0.9 ? '01JREF' : pick(r, strings));
  put(d, 'mailer_id', r() < 0.9 ? 'domain_1' : pick(r, strings));
  put(d, 'email', r() < 0.9 ? ['a@x.test', 'b@x.test'] : pick(r, [[], [1], 'a@x.test', null]));
  put(d, 'custom_args', r() < 0.8 ? pick(r, argsList.slice(0, 4)) : pick(r, argsList));
  put(d, 'message_id', r() < 0.9 ? '<m@x>' : pick(r, strings));
  put(d, 'thread_id', r() < 0.9 ? '' : pick(r, strings));
  put(d, 'webhook_id', r() < 0.9 ? '' : pick(r, strings));
  put(d, 'event_at', r() < 0.8 ? stamps[0] : pick(r, stamps));
  put(d, 'tracking', trackingOf(r));
  put(d, 'failed_reason', r() < 0.9 ? '' : pick(r, strings));
  // Optional fields: mostly absent or valid, now and then anything.
  const opt = (list: readonly unknown[]) => (r() < 0.9 ? pick(r, list.slice(0, 3)) : pick(r, list));
  put(d, 'attempt', opt(ints));
  put(d, 'max_attempts', opt(ints));
  put(d, 'retry_scheduled', opt(bools));
  put(d, 'provider_error', opt(optionalStrings));
  put(d, 'error_code', opt(optionalStrings));
  put(d, 'num_retries', opt(optionalStrings));
  if (r() < 0.1) d.unknown_field = 'dropped';
  const details = r() < 0.5 ? Object.fromEntries(Object.entries(d).sort(() => r() - 0.5)) : d;
  const success =
    r() < 0.9
      ? ['MAIL_DELIVERED', 'MAIL_OPENED', 'MAIL_CLICKED', 'MAIL_UNSUBSCRIBED'].includes(String(event))
      : pick(r, [true, false, 'yes']);
  const top: Record<string, unknown> = r() < 0.5 ? { event, success, details } : { details, success, event };
  if (r() < 0.05) top.extra = 1;
  if (r() < 0.02) return pick(r, [null, [], 'event']);
  // Through JSON, as the bus delivers it.
  return JSON.parse(JSON.stringify(top));
}

describe('fastEmailEvent', () => {
  it('returns exactly what EmailEventSchema returns (values and key order), or leaves the event to it', () => {
    const r = rng(20261126);
    let decided = 0;
    let valid = 0;
    for (let i = 0; i < RUNS; i++) {
      const input = generated(r);
      const schema = EmailEventSchema.safeParse(input);
      const fast = fastEmailEvent(input);
      if (schema.success) valid++;
      if (fast === undefined) continue;
      decided++;
      expect(schema.success).toBe(true);
      // JSON text compares values and key order at every level (webhook bodies are this text).
      expect(JSON.stringify(fast)).toBe(JSON.stringify(schema.success ? schema.data : null));
    }
    // The generator reaches both sides, and the fast path decides the valid events it can.
    expect(valid).toBeGreaterThan(RUNS / 10);
    expect(decided).toBeGreaterThan(valid * 0.9);
  });

  it('does not share arrays or objects it copies with the input', () => {
    const input = JSON.parse(
      JSON.stringify({
        event: 'MAIL_DELIVERED',
        success: true,
        details: {
          ref_id: 'r',
          mailer_id: 'm',
          email: ['a@x.test'],
          custom_args: { n: 1 },
          message_id: '',
          thread_id: '',
          webhook_id: '',
          event_at: '2026-01-01T00:00:00Z',
          tracking: emptyTracking(),
          failed_reason: '',
        },
      }),
    );
    const out = fastEmailEvent(input)!;
    expect(out.details.email).not.toBe(input.details.email);
    expect(out.details.custom_args).not.toBe(input.details.custom_args);
    expect(out.details.tracking).not.toBe(input.details.tracking);
  });
});
