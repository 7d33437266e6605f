/**
 * The one statement fragment that adds to the stats rollups (table stats_rollups, migration
 * 0031; docs/operations.md "Stats"). The writers embed it as a data-modifying CTE in the
 * statement that writes what is counted, so a count commits with its row or not at all:
 * libs/store sends.ts (`requested`, with the accepted send's log rows) and email-events.ts
 * (every other counter, only for events newly inserted).
 *
 * Contention: every writer of one tenant, hour and dimensions adds into the same bucket, and an
 * upsert holds the row's lock until its transaction commits. A bucket can therefore be sharded
 * into STATS_SLOTS slots: each database connection adds into its slot
 * (pg_backend_pid() % STATS_SLOTS) and readers sum the slots. Measured
 * (bench/history/38-2026-11-27-stats-rollups.md): with the group commits of the gateway and the
 * send service (0.04 and 0.13-0.2 transactions per email) bench:send shows no difference between
 * 1 and 8 slots, while 8 slots make a 30-day query read 8 times the rows (p99 113-133 ms against
 * 29-31 ms). So one slot; raise it (no migration: readers sum whatever slots exist) if a tenant's
 * commit rate ever queues on its bucket. Rows are upserted in key order, after the statement's
 * other writes (the source is an aggregate of them), so two statements never wait on each
 * other's rollup rows in opposite orders.
 */
import { STATS_COUNTERS, type StatsCounter } from '@mailyard/contracts';

/** Slots per bucket; changing it needs no migration (readers sum whatever slots exist). */
export const STATS_SLOTS = 1;

/**
 * An `INSERT ... ON CONFLICT DO UPDATE` adding the rows of `source` into stats_rollups, each into
 * its hour row and its day row. `source` yields tenant_id, bucket (an hour, UTC), domain,
 * mailer_id, campaign_id ('' for none) and the `counters` named.
 */
export function statsRollupUpsertSql(source: string, counters: readonly StatsCounter[]): string {
  for (const c of counters) if (!STATS_COUNTERS.includes(c)) throw new Error(`unknown counter ${c}`);
  const set = counters.map((c) => `${c} = s.${c} + EXCLUDED.${c}`).join(', ');
  return `INSERT INTO stats_rollups AS s (tenant_id, span, bucket, domain, mailer_id, campaign_id, slot, ${counters.join(', ')})
  SELECT src.tenant_id, p.span,
         CASE WHEN p.span = 'day' THEN date_trunc('day', src.bucket, 'UTC') ELSE src.bucket END,
         src.domain, src.mailer_id, src.campaign_id, (pg_backend_pid() % ${STATS_SLOTS})::smallint,
         ${counters.map((c) => `sum(src.${c})`).join(', ')}
    FROM (${source}) AS src CROSS JOIN (VALUES ('hour'), ('day')) AS p(span)
   GROUP BY 1, 2, 3, 4, 5, 6
   ORDER BY 1, 2, 3, 4, 5, 6
  ON CONFLICT (tenant_id, span, bucket, domain, mailer_id, campaign_id, slot) DO UPDATE SET ${set}`;
}
