/**
 * Reads the stats rollups (table stats_rollups, migration 0031; written by stats-rollup-sql.ts):
 * the tenant's counters per UTC bucket of a range, from the rows of that span (hour or day),
 * summed over the slots of a bucket and the dimensions not filtered on. Never reads email_events: the cost is the
 * number of rollup rows in range (hours x dimension values x slots), not the number of events.
 */
import { STATS_COUNTERS, type StatsCounts, type StatsGranularity } from '@mailyard/contracts';
import type { Queryable } from '@mailyard/platform';

export interface StatsFilter {
  tenantId: string;
  granularity: StatsGranularity;
  /** [from, to) in ms, on bucket boundaries. */
  from: number;
  to: number;
  domain?: string;
  mailerId?: string;
  campaignId?: string;
}

const SUMS = STATS_COUNTERS.map((c) => `sum(${c})::bigint AS ${c}`).join(', ');

export const stats = {
  /** Counts per bucket that has any row (keyed by the bucket's start in ms). */
  async buckets(db: Queryable, f: StatsFilter): Promise<Map<number, StatsCounts>> {
    const params: unknown[] = [
      f.tenantId,
      new Date(f.from).toISOString(),
      new Date(f.to).toISOString(),
      f.granularity,
    ];
    const where = ['tenant_id = $1', 'span = $4', 'bucket >= $2::timestamptz', 'bucket < $3::timestamptz'];
    const add = (value: string | undefined, column: string) => {
      if (value === undefined) return;
      params.push(value);
      where.push(`${column} = $${params.length}`);
    };
    add(f.domain, 'domain');
    add(f.mailerId, 'mailer_id');
    add(f.campaignId, 'campaign_id');
    const { rows } = await db.query<Record<string, string> & { at: Date }>(
      `SELECT bucket AS at, ${SUMS} FROM stats_rollups WHERE ${where.join(' AND ')} GROUP BY 1`,
      params,
    );
    const out = new Map<number, StatsCounts>();
    for (const r of rows) {
      const counts = {} as StatsCounts;
      for (const c of STATS_COUNTERS) counts[c] = Number(r[c]);
      out.set(r.at.getTime(), counts);
    }
    return out;
  },
};
