/**
 * Reads the stored DMARC aggregate and TLS-RPT reports of one tenant domain (tables of migration
 * 0036) into the summaries of `GET /v1/domain/{domain}/dmarc` and `/tls-reports` (shapes and the
 * range rules: libs/contracts api/deliverability.ts). Everything is summed by PostgreSQL: Node
 * receives the totals, at most DMARC_SOURCES_MAX source groups and one row per (day, failure
 * type), never the report rows themselves.
 *
 * DMARC: reports whose period overlaps [from, to) (`end_at > from` walks dmarc_reports_range_idx,
 * `begin_at < to` filters). TLS-RPT: reports whose start_at lies in [from, to) (whole UTC days,
 * tls_reports_range_idx), summed per UTC day of start_at.
 */
import {
  DMARC_SOURCES_MAX,
  type DmarcSummary,
  type ReportsRange,
  type TlsReportDay,
} from '@mailyard/contracts';
import type { Queryable } from '@mailyard/platform';

export interface ReportsFilter extends ReportsRange {
  tenantId: string;
  domainId: string;
}

const DMARC_REPORTS = `
  SELECT id, org_name FROM dmarc_reports
   WHERE tenant_id = $1 AND domain_id = $2 AND end_at > $3::timestamptz AND begin_at < $4::timestamptz`;

/** A policy_evaluated result as stored (pass / fail), compared case-insensitively. */
const PASS = (column: string) => `lower(r.${column}) = 'pass'`;

const params = (f: ReportsFilter) => [
  f.tenantId,
  f.domainId,
  new Date(f.from).toISOString(),
  new Date(f.to).toISOString(),
];

/**
 * A result-type as RFC 8460 writes them (`certificate-expired`, `sts-policy-invalid`: lowercase
 * words and hyphens); anything else a reporter sends is counted under OTHER_TYPE.
 */
const RESULT_TYPE_RE = '^[a-z0-9][a-z0-9-]{0,63}$';
const OTHER_TYPE = 'other';
/** A failed_session_count above this (or below 0) is not a count a reporter sends: skipped. */
const COUNT_MAX = 1e12;

export const deliverabilitySummary = {
  /** The DMARC summary of the domain's reports overlapping the range. */
  async dmarc(db: Queryable, f: ReportsFilter): Promise<DmarcSummary> {
    const totals = await db.query<Record<string, string>>(
      `WITH rep AS (${DMARC_REPORTS})
       SELECT (SELECT count(*) FROM rep)::bigint AS reports,
              coalesce(sum(r.count), 0)::bigint AS messages,
              coalesce(sum(r.count) FILTER (WHERE ${PASS('dkim')} OR ${PASS('spf')}), 0)::bigint AS dmarc_pass,
              coalesce(sum(r.count) FILTER (WHERE ${PASS('dkim')}), 0)::bigint AS dkim_aligned_pass,
              coalesce(sum(r.count) FILTER (WHERE ${PASS('spf')}), 0)::bigint AS spf_aligned_pass
         FROM rep JOIN dmarc_report_rows r ON r.report_id = rep.id`,
      params(f),
    );
    const t = totals.rows[0]!;
    const sources = await db.query<{
      source_ip: string;
      count: string;
      disposition: string;
      dkim: string;
      spf: string;
      header_from: string;
      reporter: string;
    }>(
      `WITH rep AS (${DMARC_REPORTS})
       SELECT r.source_ip, sum(r.count)::bigint AS count, r.disposition, r.dkim, r.spf, r.header_from,
              rep.org_name AS reporter
         FROM rep JOIN dmarc_report_rows r ON r.report_id = rep.id
        GROUP BY r.source_ip, r.disposition, r.dkim, r.spf, r.header_from, rep.org_name
        ORDER BY 2 DESC, 1, 3, 4, 5, 6, 7
        LIMIT ${DMARC_SOURCES_MAX}`,
      params(f),
    );
    return {
      reports: Number(t.reports),
      messages: Number(t.messages),
      dmarc_pass: Number(t.dmarc_pass),
      dkim_aligned_pass: Number(t.dkim_aligned_pass),
      spf_aligned_pass: Number(t.spf_aligned_pass),
      sources: sources.rows.map((s) => ({ ...s, count: Number(s.count) })),
    };
  },

  /**
   * The TLS-RPT reports that started in [from, to) (whole UTC days), per day that has any
   * (keyed by the day's start in ms): reports, successful and failed sessions, failed sessions
   * by result type (failure_details[].failed_session_count; entries without a result type or a
   * count in 0..COUNT_MAX are skipped; a result type that is not an RFC 8460 style keyword is
   * counted as `other`).
   */
  async tlsDays(db: Queryable, f: ReportsFilter): Promise<Map<number, Omit<TlsReportDay, 'date'>>> {
    const { rows } = await db.query<{
      day: Date;
      reports: string | null;
      successful: string | null;
      failed: string | null;
      result_type: string | null;
      type_count: string | null;
    }>(
      `WITH rep AS (
         SELECT id, date_trunc('day', start_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS day FROM tls_reports
          WHERE tenant_id = $1 AND domain_id = $2 AND start_at >= $3::timestamptz AND start_at < $4::timestamptz
       ),
       sessions AS (
         SELECT rep.day, count(DISTINCT rep.id)::bigint AS reports,
                coalesce(sum(p.successful), 0)::bigint AS successful,
                coalesce(sum(p.failed), 0)::bigint AS failed
           FROM rep LEFT JOIN tls_report_policies p ON p.report_id = rep.id
          GROUP BY rep.day
       ),
       failures AS (
         SELECT rep.day,
                CASE WHEN lower(d->>'result_type') ~ '${RESULT_TYPE_RE}' THEN lower(d->>'result_type')
                     ELSE '${OTHER_TYPE}' END AS result_type,
                sum((d->>'failed_session_count')::numeric)::bigint AS type_count
           FROM rep
           JOIN tls_report_policies p ON p.report_id = rep.id
           CROSS JOIN LATERAL jsonb_array_elements(
             CASE WHEN jsonb_typeof(p.failure_details) = 'array' THEN p.failure_details ELSE '[]'::jsonb END
           ) AS d
          WHERE jsonb_typeof(d) = 'object'
            AND jsonb_typeof(d->'result_type') = 'string'
            AND jsonb_typeof(d->'failed_session_count') = 'number'
            AND (d->>'failed_session_count')::numeric BETWEEN 0 AND ${COUNT_MAX}
          GROUP BY 1, 2
       )
       SELECT s.day, s.reports, s.successful, s.failed, NULL AS result_type, NULL AS type_count FROM sessions s
       UNION ALL
       SELECT f.day, NULL, NULL, NULL, f.result_type, f.type_count FROM failures f`,
      params(f),
    );
    const days = new Map<number, { sessions?: (typeof rows)[number]; types: [string, number][] }>();
    for (const r of rows) {
      const ms = r.day.getTime();
      const d = days.get(ms) ?? { types: [] };
      days.set(ms, d);
      if (r.result_type === null) d.sessions = r;
      else d.types.push([r.result_type, Number(r.type_count)]);
    }
    const out = new Map<number, Omit<TlsReportDay, 'date'>>();
    for (const [ms, d] of days)
      out.set(ms, {
        reports: Number(d.sessions?.reports ?? 0),
        successful: Number(d.sessions?.successful ?? 0),
        failed: Number(d.sessions?.failed ?? 0),
        failure_types: Object.fromEntries(d.types.sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))),
      });
    return out;
  },
};
