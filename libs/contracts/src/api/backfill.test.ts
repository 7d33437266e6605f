import { BackfillErrorText, StartBackfillSchema, parseWholeSecond, planBackfill } from './backfill';

const NOW = new Date('2026-11-27T16:20:30.750Z');
const plan = (body: Record<string, unknown>, now = NOW) => {
  const parsed = StartBackfillSchema.safeParse(body);
  if (!parsed.success) return { ok: false as const, error: parsed.error.issues[0]!.message };
  return planBackfill(parsed.data, now, 1000);
};

describe('parseWholeSecond (window precision is whole seconds)', () => {
  test('a fraction of any length is dropped, never rounded up', () => {
    expect(parseWholeSecond('2026-01-01T00:00:00.500Z')).toEqual(new Date('2026-01-01T00:00:00Z'));
    expect(parseWholeSecond('2026-01-01T00:00:00.999999999Z')).toEqual(new Date('2026-01-01T00:00:00Z'));
    expect(parseWholeSecond('2026-01-01T00:00:59.1+02:00')).toEqual(new Date('2025-12-31T22:00:59Z'));
    expect(parseWholeSecond('1969-12-31T23:59:59.5Z')).toEqual(new Date('1969-12-31T23:59:59Z'));
    expect(parseWholeSecond('2026-01-01t00:00:00.000z')).toEqual(new Date('2026-01-01T00:00:00Z'));
  });
  test('what is not an RFC 3339 date-time stays refused', () => {
    for (const bad of [
      '2026-01-01',
      '2026-01-01T00:00:00',
      '2026-01-01T00:00:00.Z',
      '2026-01-01T00:00:00,5Z',
      '2026-02-31T00:00:00Z',
      '2026-01-01T24:00:00Z',
      'yesterday',
    ])
      expect(parseWholeSecond(bad)).toBeNull();
  });
});

describe('planBackfill', () => {
  test('fractional window bounds are truncated, not a 400', () => {
    const r = plan({ window_start: '2026-01-01T00:00:00.500Z', window_end: '2026-02-01T00:00:00.999Z' });
    expect(r).toMatchObject({
      ok: true,
      plan: { windowStart: new Date('2026-01-01T00:00:00Z'), windowEnd: new Date('2026-02-01T00:00:00Z') },
    });
  });

  test('a participant import defaults to one year before now, whatever window_end says', () => {
    expect(plan({ participant: 'Alice@Peer.test' })).toEqual({
      ok: true,
      plan: {
        participant: 'alice@peer.test',
        windowStart: new Date('2025-11-27T16:20:30Z'),
        windowEnd: new Date('2026-11-27T16:20:30Z'),
        count: 0,
        folders: { inbox: true, sent: false, spam: false, trash: false },
      },
    });
    const earlier = plan({ participant: 'a@b.test', window_end: '2026-03-01T00:00:00Z' });
    expect(earlier).toMatchObject({ ok: true, plan: { windowStart: new Date('2025-11-27T16:20:30Z') } });
    // a leap day: one calendar year back
    const leap = plan({ participant: 'a@b.test' }, new Date('2028-02-29T12:00:00Z'));
    expect(leap).toMatchObject({ ok: true, plan: { windowStart: new Date('2027-03-01T12:00:00Z') } });
  });

  test('a participant import whose window_end is more than a year ago needs window_start', () => {
    expect(plan({ participant: 'a@b.test', window_end: '2025-11-27T16:20:30Z' })).toEqual({
      ok: false,
      error: BackfillErrorText.defaultWindowOrder,
    });
    expect(
      plan({
        participant: 'a@b.test',
        window_end: '2025-01-01T00:00:00Z',
        window_start: '2024-06-01T00:00:00Z',
      }),
    ).toMatchObject({ ok: true, plan: { windowStart: new Date('2024-06-01T00:00:00Z') } });
  });

  test('other rules as before: a bound for a full import, order, count clamp', () => {
    expect(plan({})).toEqual({ ok: false, error: BackfillErrorText.fullImportNeedsBound });
    expect(plan({ window_start: '2026-02-01T00:00:00Z', window_end: '2026-02-01T00:00:00.900Z' })).toEqual({
      ok: false,
      error: BackfillErrorText.windowOrder,
    });
    expect(plan({ count: 5000 })).toMatchObject({ ok: true, plan: { count: 1000, windowStart: null } });
  });
});
