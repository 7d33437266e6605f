/**
 * GET /v1/stats (docs/api/stats.md): per-day or per-hour
 * counts of what happened to the tenant's email, from rollups (libs/store stats.ts). This module
 * holds the query schema, the answer's shape, which counter an email event moves
 * (statsCounterOf) and the pure bucket arithmetic (statsRange, statsBuckets): UTC buckets, the
 * range rounded outward to whole buckets, at most STATS_MAX_BUCKETS of them.
 */
import { z } from 'zod';
import { parseWithFieldMessages } from '../validation/messages';
import {
  type TimeBound,
  checkTimeRange,
  domainParam,
  queryParam as param,
  timeBoundParam as timeParam,
} from './query-params';

/** The counters, in the answer's order. */
export const STATS_COUNTERS = [
  'requested',
  'delivered',
  'bounced',
  'spam',
  'opened',
  'unique_opened',
  'clicked',
  'unique_clicked',
  'unsubscribed',
  'failed',
  'rejected',
] as const;
export type StatsCounter = (typeof STATS_COUNTERS)[number];
export type StatsCounts = Record<StatsCounter, number>;

export const STATS_GRANULARITIES = ['day', 'hour'] as const;
export type StatsGranularity = (typeof STATS_GRANULARITIES)[number];

/** Most buckets one query answers: 31 days of hours, a year (leap) of days. */
export const STATS_MAX_BUCKETS: Record<StatsGranularity, number> = { hour: 31 * 24, day: 366 };

const BUCKET_MS: Record<StatsGranularity, number> = { hour: 3_600_000, day: 86_400_000 };

/** Without dates: the last 7 days including today. */
export const STATS_DEFAULT_DAYS = 7;

/**
 * The counter an email event moves (per recipient it names), or null for none. `unique_opened`
 * and `unique_clicked` are moved besides `opened`/`clicked` by the first one per recipient copy;
 * `requested` by the send's acceptance, not by an event. Suppressed recipients are recorded as
 * MAIL_GENERATION_REJECTION, so `rejected` counts them.
 */
export function statsCounterOf(event: string, retryScheduled?: boolean): StatsCounter | null {
  switch (event) {
    case 'MAIL_DELIVERED':
      return 'delivered';
    case 'MAIL_BOUNCE':
      return 'bounced';
    case 'MAIL_SPAM':
      return 'spam';
    case 'MAIL_OPENED':
      return 'opened';
    case 'MAIL_CLICKED':
      return 'clicked';
    case 'MAIL_UNSUBSCRIBED':
      return 'unsubscribed';
    case 'SMTP_ERROR':
      return retryScheduled === false ? 'failed' : null;
    case 'PHISHING':
    case 'MAIL_POLICY_REJECTION':
    case 'MAIL_GENERATION_FAILURE':
    case 'MAIL_GENERATION_REJECTION':
      return 'rejected';
    default:
      return null;
  }
}

/** GET /v1/stats query. */
export const StatsQuerySchema = z
  .object({
    startDate: param(timeParam('start')),
    endDate: param(timeParam('end')),
    granularity: param(
      z.enum(STATS_GRANULARITIES, { errorMap: () => ({ message: 'granularity must be one of day, hour' }) }),
    ).transform((v) => v ?? 'day'),
    /** The sending domain (the From address's domain), IDNA ok, exact match. */
    domain: param(domainParam()),
    mailer_id: param(z.string().max(64, 'mailer_id must be at most 64 characters')),
    campaignId: param(z.string().max(255, 'campaignId must be at most 255 characters')),
  })
  .superRefine((q, ctx) => {
    // A bare end date is exclusive at the next midnight: a start there is after the range.
    checkTimeRange(ctx, q.startDate, q.endDate, { start: 'startDate', end: 'endDate', emptyIsAfter: true });
  });
export type StatsQuery = z.output<typeof StatsQuerySchema>;

/** Parses the query; the first problem's message, e.g. `granularity must be one of day, hour`. */
export const parseStatsQuery = (input: unknown) => parseWithFieldMessages(StatsQuerySchema, input);

/** The buckets a query covers: [from, to) in ms, both on bucket boundaries. */
export interface StatsRange {
  granularity: StatsGranularity;
  from: number;
  to: number;
}

const floorTo = (ms: number, g: StatsGranularity) => Math.floor(ms / BUCKET_MS[g]) * BUCKET_MS[g];

/**
 * The whole buckets covering [startDate, endDate] (rounded outward: an instant inside a bucket
 * takes the whole bucket; an exclusive end on a boundary ends there). Without startDate: the
 * day STATS_DEFAULT_DAYS - 1 days before endDate's (or now's) day; without endDate: the end of
 * today (UTC). A string error when the range has more than STATS_MAX_BUCKETS buckets.
 */
export function statsRange(
  q: { startDate?: TimeBound; endDate?: TimeBound; granularity: StatsGranularity },
  now: number,
): StatsRange | string {
  const g = q.granularity;
  const endMs = q.endDate ? Date.parse(q.endDate.at) : floorTo(now, 'day') + BUCKET_MS.day;
  const endExclusive = q.endDate ? q.endDate.exclusive : true;
  // The bucket holding the last instant in range, plus one.
  const to = endExclusive ? floorTo(endMs - 1, g) + BUCKET_MS[g] : floorTo(endMs, g) + BUCKET_MS[g];
  const from = q.startDate
    ? floorTo(Date.parse(q.startDate.at), g)
    : floorTo(endMs - (endExclusive ? 1 : 0), 'day') - (STATS_DEFAULT_DAYS - 1) * BUCKET_MS.day;
  const count = Math.max(0, (to - from) / BUCKET_MS[g]);
  const max = STATS_MAX_BUCKETS[g];
  if (count > max) {
    return g === 'hour'
      ? `The date range covers too many hours: at most ${max} (31 days) with granularity hour`
      : `The date range covers too many days: at most ${max} with granularity day`;
  }
  return { granularity: g, from, to: Math.max(from, to) };
}

/** `2026-11-27T00:00:00Z`: a bucket's start as the answer writes it. */
export const bucketStart = (ms: number) => `${new Date(ms).toISOString().slice(0, 19)}Z`;

export const zeroCounts = (): StatsCounts =>
  Object.fromEntries(STATS_COUNTERS.map((c) => [c, 0])) as StatsCounts;

export interface StatsBucket extends StatsCounts {
  start: string;
}

/**
 * Every bucket of `range` in order, with the counts `found` has for it (keyed by the bucket's
 * start in ms) and zeros for the rest (a chart wants every bucket), and their totals.
 */
export function statsBuckets(
  range: StatsRange,
  found: ReadonlyMap<number, StatsCounts>,
): { data: StatsBucket[]; totals: StatsCounts } {
  const totals = zeroCounts();
  const data: StatsBucket[] = [];
  for (let t = range.from; t < range.to; t += BUCKET_MS[range.granularity]) {
    const counts = found.get(t) ?? zeroCounts();
    for (const c of STATS_COUNTERS) totals[c] += counts[c];
    data.push({ start: bucketStart(t), ...counts });
  }
  return { data, totals };
}

/** 200 answer of GET /v1/stats. */
export interface StatsResponse {
  success: true;
  data: StatsBucket[];
  totals: StatsCounts;
}
