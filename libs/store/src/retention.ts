/**
 * What the retention sweeper removes (docs/operations.md "Retention"), one rule per (table, time
 * column, setting), and the one bounded statement that removes a batch of a rule's expired rows.
 *
 * A row expires when its time column is older than the cutoff (now minus the rule's duration) AND it
 * is finished: a row the platform still works on (a copy not yet delivered or failed, a raw message
 * not yet handed to the dispatcher, a webhook delivery still due) is never removed, whatever its age,
 * so retention never loses an accepted email, message or delivery (docs/architecture.md "Reliability").
 *
 * A batch is one statement: the oldest `limit` expired rows at or after `after` (a keyset walk of the
 * time column's index, migration 0033), locked with SKIP LOCKED (a row a send or the dispatcher holds
 * is passed over, not waited for; the next sweep takes it), deleted by ctid. It returns how many went
 * and the time of the last, the `after` of the next batch; a batch that removed nothing ends the walk.
 * The walk keeps no state between sweeps: a sweep cut short (a crash, a lost lease) leaves only
 * expired rows behind, and the next sweep, by any replica, starts again from the oldest.
 *
 * Rules run in order: `sends` after `email_logs`, so a send goes in the sweep its last log row went.
 * Cascades (foreign keys ON DELETE CASCADE) take what belongs to a removed row: a delivery's attempts,
 * the replays that share its body (body_of, migration 0026; only once every one of them has expired
 * too, see the rule), a send's log rows (none are left by then), a log row's reputation row
 * (reputation_sends, migration 0037: the reputation windows are bounded by log retention).
 */
import type { Queryable } from '@mailyard/platform';

/** The durations a rule may be kept for: the retention settings (services/gateway retention/settings.ts). */
export type RetentionSetting =
  | 'RETENTION_LOGS'
  | 'RETENTION_EVENTS'
  | 'RETENTION_INBOUND_RAW'
  | 'RETENTION_WEBHOOK_DELIVERIES'
  | 'RETENTION_AUDIT'
  | 'RETENTION_REPORTS';

export interface RetentionRule {
  /** The table (also the name in metrics and logs). */
  table: string;
  /** Its time column (timestamptz, indexed, never updated): a row's age. */
  timeColumn: string;
  /** The setting that says how long a row is kept. */
  setting: RetentionSetting;
  /**
   * SQL condition on the row (alias `t`) that holds when it is finished and may go once expired;
   * `$1` is the cutoff. Absent: every expired row goes.
   */
  finished?: string;
}

/** Webhook delivery states after which nothing more is attempted. */
const DELIVERY_DONE = `status IN ('delivered', 'dropped')`;

export const RETENTION_RULES: readonly RetentionRule[] = [
  {
    // A recipient's log row once its send outcome is recorded, the copy was cancelled before it
    // went, or a provider (SparkPost) accepted it: the platform no longer works on such a copy
    // (a provider's callback may never come); a copy still queued or retrying stays until it ends.
    table: 'email_logs',
    timeColumn: 'created_at',
    setting: 'RETENTION_LOGS',
    finished: `(t.send_outcome IS NOT NULL OR t.status = 'CANCELLED' OR t.provider_accepted_at IS NOT NULL)`,
  },
  {
    // The send (its stored request, often the largest row of an email) once no log row is left.
    table: 'sends',
    timeColumn: 'created_at',
    setting: 'RETENTION_LOGS',
    finished: 'NOT EXISTS (SELECT 1 FROM email_logs l WHERE l.ref_id = t.ref_id)',
  },
  { table: 'email_events', timeColumn: 'event_at', setting: 'RETENTION_EVENTS' },
  {
    // The whole row: nothing shows a processed message (its payload went to the dispatcher, in
    // webhook_deliveries); a message still `stored` is the recovery sweep's and stays.
    table: 'inbound_messages',
    timeColumn: 'received_at',
    setting: 'RETENTION_INBOUND_RAW',
    finished: `t.status = 'processed'`,
  },
  {
    // A finished delivery, unless a replay that shares its body (body_of) is younger or still due:
    // the body stays while anything may still send or show it. Removing it takes its attempts and
    // its replays (all expired and finished by then) through ON DELETE CASCADE.
    table: 'webhook_deliveries',
    timeColumn: 'created_at',
    setting: 'RETENTION_WEBHOOK_DELIVERIES',
    finished: `t.${DELIVERY_DONE} AND NOT EXISTS (
      SELECT 1 FROM webhook_deliveries r
       WHERE r.body_of = t.id AND NOT (r.created_at < $1 AND r.${DELIVERY_DONE}))`,
  },
  // The audit log (migration 0030; its time column is indexed there, audit_log_at_idx).
  { table: 'audit_log', timeColumn: 'at', setting: 'RETENTION_AUDIT' },
  // DMARC aggregate and TLS-RPT reports (migration 0036, received_at indexed there); their rows
  // and policies go with them (ON DELETE CASCADE).
  { table: 'dmarc_reports', timeColumn: 'received_at', setting: 'RETENTION_REPORTS' },
  { table: 'tls_reports', timeColumn: 'received_at', setting: 'RETENTION_REPORTS' },
  {
    // Provider callback batches (migration 0028) once processed: their events are email events
    // by then, so they are kept as long as those. A batch not yet processed stays.
    table: 'provider_callback_batches',
    timeColumn: 'received_at',
    setting: 'RETENTION_EVENTS',
    finished: 't.processed_at IS NOT NULL',
  },
  {
    // The ids of provider events already processed (a batch delivered twice records nothing
    // twice): a provider retries for hours, not for the events' duration.
    table: 'provider_callback_events',
    timeColumn: 'processed_at',
    setting: 'RETENTION_EVENTS',
  },
];

export interface RetentionBatch {
  /** Rows removed by this batch (not counting cascades). */
  removed: number;
  /**
   * Time of the last row removed, as PostgreSQL wrote it (microseconds kept): the next batch starts
   * there. Null when nothing was removed.
   */
  last: string | null;
}

const IDENT = /^[a-z_][a-z0-9_]*$/;

/** The statement of one batch of `rule`: $1 cutoff, $2 walk position, $3 limit. */
export function retentionBatchSql(rule: RetentionRule): string {
  if (!IDENT.test(rule.table) || !IDENT.test(rule.timeColumn))
    throw new Error(`retention rule: bad identifier ${rule.table}.${rule.timeColumn}`);
  const at = `t.${rule.timeColumn}`;
  return `WITH doomed AS (
            SELECT t.ctid AS row, ${at} AS at FROM ${rule.table} t
             WHERE ${at} < $1 AND ${at} >= $2${rule.finished ? ` AND ${rule.finished}` : ''}
             ORDER BY ${at} LIMIT $3
               FOR UPDATE OF t SKIP LOCKED),
          gone AS (DELETE FROM ${rule.table} t USING doomed d WHERE t.ctid = d.row RETURNING d.at)
          SELECT count(*)::int AS removed, max(at)::text AS last FROM gone`;
}

/** Removes up to `limit` of `rule`'s rows older than `cutoff`, from `after` on, oldest first. */
export async function removeExpiredBatch(
  db: Queryable,
  rule: RetentionRule,
  cutoff: Date,
  after: string | null,
  limit: number,
): Promise<RetentionBatch> {
  const { rows } = await db.query<RetentionBatch>(retentionBatchSql(rule), [
    cutoff,
    after ?? '-infinity',
    limit,
  ]);
  return rows[0]!;
}
