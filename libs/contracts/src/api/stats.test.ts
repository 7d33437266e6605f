import {
  STATS_COUNTERS,
  type StatsCounts,
  parseStatsQuery,
  statsBuckets,
  statsCounterOf,
  statsRange,
  zeroCounts,
} from './stats';

const NOW = Date.parse('2026-11-27T16:15:42.123Z');
const H = 3_600_000;
const D = 86_400_000;

function range(query: Record<string, string>) {
  const q = parseStatsQuery(query);
  if (!q.success) throw new Error(q.error);
  return statsRange(q.data, NOW);
}
const iso = (ms: number) => new Date(ms).toISOString();

describe('statsRange', () => {
  it('defaults to the last 7 days including today, by day', () => {
    const r = range({});
    expect(r).toEqual({
      granularity: 'day',
      from: Date.parse('2026-11-21T00:00:00Z'),
      to: Date.parse('2026-11-28T00:00:00Z'),
    });
  });

  it('takes a bare date as its whole UTC day', () => {
    expect(range({ startDate: '2026-11-20', endDate: '2026-11-20' })).toMatchObject({
      from: Date.parse('2026-11-20T00:00:00Z'),
      to: Date.parse('2026-11-21T00:00:00Z'),
    });
    const hours = range({ startDate: '2026-11-20', endDate: '2026-11-20', granularity: 'hour' });
    expect(typeof hours !== 'string' && (hours.to - hours.from) / H).toBe(24);
  });

  it('rounds instants outward to whole buckets; an inclusive end takes its bucket', () => {
    const r = range({
      startDate: '2026-11-20T10:30:00Z',
      endDate: '2026-11-20T12:00:00Z',
      granularity: 'hour',
    });
    expect(typeof r !== 'string' && [iso(r.from), iso(r.to)]).toEqual([
      '2026-11-20T10:00:00.000Z',
      '2026-11-20T13:00:00.000Z',
    ]);
    const offset = range({
      startDate: '2026-11-20T23:30:00-02:00',
      endDate: '2026-11-21',
      granularity: 'day',
    });
    expect(typeof offset !== 'string' && [iso(offset.from), iso(offset.to)]).toEqual([
      '2026-11-21T00:00:00.000Z',
      '2026-11-22T00:00:00.000Z',
    ]);
  });

  it('counts 7 days back from an end date given alone', () => {
    const r = range({ endDate: '2026-11-10' });
    expect(typeof r !== 'string' && [iso(r.from), iso(r.to)]).toEqual([
      '2026-11-04T00:00:00.000Z',
      '2026-11-11T00:00:00.000Z',
    ]);
  });

  it('answers a start after today with the buckets asked for', () => {
    const r = range({ startDate: '2026-11-29' });
    expect(r).toEqual({
      granularity: 'day',
      from: Date.parse('2026-11-29T00:00:00Z'),
      to: Date.parse('2026-11-29T00:00:00Z'),
    });
  });

  it('allows 31 days of hours and 366 days, not more', () => {
    expect(typeof range({ startDate: '2026-10-01', endDate: '2026-10-31', granularity: 'hour' })).toBe(
      'object',
    );
    expect(range({ startDate: '2026-10-01', endDate: '2026-11-01', granularity: 'hour' })).toBe(
      'The date range covers too many hours: at most 744 (31 days) with granularity hour',
    );
    expect(typeof range({ startDate: '2024-01-01', endDate: '2024-12-31' })).toBe('object');
    expect(range({ startDate: '2024-01-01', endDate: '2025-01-01' })).toBe(
      'The date range covers too many days: at most 366 with granularity day',
    );
  });
});

describe('parseStatsQuery', () => {
  const error = (q: Record<string, string>) => {
    const r = parseStatsQuery(q);
    return r.success ? null : r.error;
  };
  it('reads the filters and defaults the granularity to day', () => {
    const r = parseStatsQuery({
      domain: 'Example.COM',
      mailer_id: 'm1',
      campaignId: 'spring',
      granularity: '',
    });
    expect(r).toEqual({
      success: true,
      data: { domain: 'example.com', mailer_id: 'm1', campaignId: 'spring', granularity: 'day' },
    });
  });
  it('answers bad input with the parameter it concerns', () => {
    expect(error({ granularity: 'week' })).toBe('granularity must be one of day, hour');
    expect(error({ startDate: '2026-13-01' })).toBe(
      'startDate must be an RFC 3339 date-time or a YYYY-MM-DD date',
    );
    expect(error({ endDate: 'yesterday' })).toBe(
      'endDate must be an RFC 3339 date-time or a YYYY-MM-DD date',
    );
    expect(error({ startDate: '2026-11-02', endDate: '2026-11-01' })).toBe(
      'startDate must not be after endDate',
    );
    expect(error({ domain: 'not a domain' })).toBe('domain must be a valid domain name');
    expect(error({ campaignId: 'x'.repeat(256) })).toBe('campaignId must be at most 255 characters');
  });
});

describe('statsBuckets', () => {
  it('returns every bucket, zeros where nothing was found, and the totals', () => {
    const from = Date.parse('2026-11-20T00:00:00Z');
    const some: StatsCounts = { ...zeroCounts(), requested: 3, delivered: 2, unique_opened: 1 };
    const { data, totals } = statsBuckets(
      { granularity: 'day', from, to: from + 3 * D },
      new Map([[from + D, some]]),
    );
    expect(data.map((b) => b.start)).toEqual([
      '2026-11-20T00:00:00Z',
      '2026-11-21T00:00:00Z',
      '2026-11-22T00:00:00Z',
    ]);
    expect(data[0]).toEqual({ start: '2026-11-20T00:00:00Z', ...zeroCounts() });
    expect(data[1]).toEqual({ start: '2026-11-21T00:00:00Z', ...some });
    expect(totals).toEqual(some);
    expect(Object.keys(data[1]!).slice(1)).toEqual([...STATS_COUNTERS]);
  });
});

describe('statsCounterOf', () => {
  it('maps each event to the counter it moves', () => {
    expect(statsCounterOf('MAIL_DELIVERED')).toBe('delivered');
    expect(statsCounterOf('MAIL_BOUNCE')).toBe('bounced');
    expect(statsCounterOf('MAIL_SPAM')).toBe('spam');
    expect(statsCounterOf('MAIL_OPENED')).toBe('opened');
    expect(statsCounterOf('MAIL_CLICKED')).toBe('clicked');
    expect(statsCounterOf('MAIL_UNSUBSCRIBED')).toBe('unsubscribed');
    expect(statsCounterOf('SMTP_ERROR', false)).toBe('failed');
    expect(statsCounterOf('SMTP_ERROR', true)).toBeNull();
    for (const e of [
      'PHISHING',
      'MAIL_POLICY_REJECTION',
      'MAIL_GENERATION_FAILURE',
      'MAIL_GENERATION_REJECTION',
    ])
      expect(statsCounterOf(e)).toBe('rejected');
    expect(statsCounterOf('MAILER_DEACTIVATED')).toBeNull();
  });
});
