/**
 * The report summaries of a sending domain (docs/api/domains.md, docs/deliverability.md):
 * `GET /v1/domain/{domain}/dmarc` (DMARC aggregate reports, RFC 7489) and
 * `GET /v1/domain/{domain}/tls-reports` (TLS-RPT, RFC 8460). This module holds their query
 * (startDate/endDate parsed like the logs and stats queries: a bare date is that whole UTC day),
 * the range arithmetic (default: the last REPORTS_DEFAULT_DAYS days including today, at most
 * REPORTS_MAX_DAYS days), the answers' zod schemas and types (the routes answer them, the OpenAPI
 * catalogue shows them, the client returns them) and the pure day filling of the TLS answer.
 *
 * Which reports a range takes (stated once here, applied by libs/store deliverability-summary.ts):
 * - DMARC: a report counts when its period overlaps the range: `begin_at < to` and
 *   `end_at > from` (a report ending exactly at the range's first instant, a midnight, does not).
 *   A report overlapping two adjacent ranges counts in both.
 * - TLS-RPT: a report counts on the UTC day of its `start_at`, when that day is in the range
 *   (the range is taken as whole UTC days); each report counts on one day only.
 */
import { z } from 'zod';
import { parseWithFieldMessages } from '../validation/messages';
import {
  type TimeBound,
  checkTimeRange,
  queryParam as param,
  timeBoundParam as timeParam,
} from './query-params';

/** Without dates: the last 30 days including today (UTC). */
export const REPORTS_DEFAULT_DAYS = 30;
/** Most days one query covers (a leap year). */
export const REPORTS_MAX_DAYS = 366;
/** Most `sources` a DMARC summary lists: the largest by message count. */
export const DMARC_SOURCES_MAX = 1000;

const DAY_MS = 86_400_000;

/** Query of both report routes. */
export const DeliverabilityReportsQuerySchema = z
  .object({
    startDate: param(timeParam('start')),
    endDate: param(timeParam('end')),
  })
  .superRefine((q, ctx) => {
    checkTimeRange(ctx, q.startDate, q.endDate, { start: 'startDate', end: 'endDate', emptyIsAfter: true });
  });
export type DeliverabilityReportsQuery = z.output<typeof DeliverabilityReportsQuerySchema>;

/** Parses the query; the first problem's message, e.g. `startDate must be an RFC 3339 date-time or a YYYY-MM-DD date`. */
export const parseDeliverabilityReportsQuery = (input: unknown) =>
  parseWithFieldMessages(DeliverabilityReportsQuerySchema, input);

/** A range of time: [from, to) in ms. */
export interface ReportsRange {
  from: number;
  to: number;
}

const floorDay = (ms: number) => Math.floor(ms / DAY_MS) * DAY_MS;

export const REPORTS_RANGE_TOO_LONG = `The date range covers too many days: at most ${REPORTS_MAX_DAYS}`;

/**
 * The instants a query covers, [from, to): a start as given (a bare date: its midnight), an end
 * as given (inclusive: to is one millisecond later) or a bare end date's next midnight. Without
 * startDate: REPORTS_DEFAULT_DAYS - 1 days before the end's day; without endDate: the end of
 * today (UTC). A string error when the range spans more than REPORTS_MAX_DAYS UTC days.
 */
export function reportsRange(
  q: { startDate?: TimeBound; endDate?: TimeBound },
  now: number,
): ReportsRange | string {
  const to = q.endDate ? Date.parse(q.endDate.at) + (q.endDate.exclusive ? 0 : 1) : floorDay(now) + DAY_MS;
  const from = q.startDate
    ? Date.parse(q.startDate.at)
    : floorDay(to - 1) - (REPORTS_DEFAULT_DAYS - 1) * DAY_MS;
  const days = reportDays({ from, to });
  if (days.to - days.from > REPORTS_MAX_DAYS * DAY_MS) return REPORTS_RANGE_TOO_LONG;
  return { from, to: Math.max(from, to) };
}

/** The whole UTC days covering a range (rounded outward): the TLS summary's days. */
export function reportDays(range: ReportsRange): ReportsRange {
  const from = floorDay(range.from);
  if (range.to <= range.from) return { from, to: from };
  return { from, to: floorDay(range.to - 1) + DAY_MS };
}

const count = z.number().int().nonnegative();

/** One sending source of a DMARC summary: the rows of the reports with these values, summed. */
export const DmarcSourceSchema = z.object({
  /** The IP address that sent the mail, as the reporter saw it. */
  source_ip: z.string(),
  /** Messages (the sum of the rows' counts). */
  count,
  /** What the receiver did: none, quarantine or reject (policy_evaluated.disposition). */
  disposition: z.string(),
  /** DMARC-aligned DKIM result (policy_evaluated.dkim): pass or fail. */
  dkim: z.string(),
  /** DMARC-aligned SPF result (policy_evaluated.spf): pass or fail. */
  spf: z.string(),
  /** The From header's domain (identifiers.header_from). */
  header_from: z.string(),
  /** The reporting organisation (report_metadata.org_name). */
  reporter: z.string(),
});
export type DmarcSource = z.infer<typeof DmarcSourceSchema>;

export const DmarcSummarySchema = z.object({
  /** Reports in the range. */
  reports: count,
  /** Messages they describe (the sum of every row's count). */
  messages: count,
  /** Messages that passed DMARC: aligned DKIM or aligned SPF passed. */
  dmarc_pass: count,
  /** Messages whose aligned DKIM passed. */
  dkim_aligned_pass: count,
  /** Messages whose aligned SPF passed. */
  spf_aligned_pass: count,
  /** At most DMARC_SOURCES_MAX sources, by count (largest first). */
  sources: z.array(DmarcSourceSchema).max(DMARC_SOURCES_MAX),
});
export type DmarcSummary = z.infer<typeof DmarcSummarySchema>;

/** 200 answer of GET /v1/domain/{domain}/dmarc. */
export const DmarcSummaryResponseSchema = z
  .object({ success: z.literal(true), data: DmarcSummarySchema })
  .strict();
export type DmarcSummaryResponse = z.infer<typeof DmarcSummaryResponseSchema>;

/** One UTC day of the TLS summary: the reports that started that day, their sessions summed. */
export const TlsReportDaySchema = z.object({
  /** `YYYY-MM-DD` (UTC). */
  date: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
  /** Reports that started that day. */
  reports: count,
  /** Sessions that negotiated TLS and passed the policy (total-successful-session-count). */
  successful: count,
  /** Sessions that failed (total-failure-session-count). */
  failed: count,
  /** Failed sessions by result-type (failure-details), e.g. `certificate-expired`, `starttls-not-supported`. */
  failure_types: z.record(z.string(), count),
});
export type TlsReportDay = z.infer<typeof TlsReportDaySchema>;

export const TlsReportsSummarySchema = z.object({
  /** Reports in the range. */
  reports: count,
  /** Every UTC day of the range in order, zeros where no report started. */
  days: z.array(TlsReportDaySchema).max(REPORTS_MAX_DAYS),
});
export type TlsReportsSummary = z.infer<typeof TlsReportsSummarySchema>;

/** 200 answer of GET /v1/domain/{domain}/tls-reports. */
export const TlsReportsResponseSchema = z
  .object({ success: z.literal(true), data: TlsReportsSummarySchema })
  .strict();
export type TlsReportsResponse = z.infer<typeof TlsReportsResponseSchema>;

/** `2026-11-27`: a day's start as the TLS answer writes it. */
export const reportDate = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * Every day of `days` (whole UTC days, see reportDays) in order, with what `found` has for it
 * (keyed by the day's start in ms) and zeros for the rest.
 */
export function tlsReportDays(
  days: ReportsRange,
  found: ReadonlyMap<number, Omit<TlsReportDay, 'date'>>,
): TlsReportDay[] {
  const out: TlsReportDay[] = [];
  for (let t = days.from; t < days.to; t += DAY_MS)
    out.push({
      date: reportDate(t),
      ...(found.get(t) ?? { reports: 0, successful: 0, failed: 0, failure_types: {} }),
    });
  return out;
}
