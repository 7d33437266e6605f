import { type EmailLogEntry, type LogsQuery, type RecipientType, ulid } from '@mailyard/contracts';
import type { Queryable } from '@mailyard/platform';
import { type Page, pageAfter, toPage } from './cursor';
import { SqlFilter } from './sql-filter';

export interface QueuedRecipient {
  copyId: string;
  /** Normalized address (ASCII domain). */
  recipient: string;
  recipientDomain: string;
  recipientType: RecipientType;
}

/** An `email_logs` row as selected: the entry's fields, its id (the cursor) and timestamps as dates. */
type LogRow = Omit<EmailLogEntry, 'created_at' | 'delivered_at'> & {
  id: string;
  created_at: Date;
  delivered_at: Date | null;
};

const toEntry = ({ id: _id, ...r }: LogRow): EmailLogEntry => ({
  ...r,
  created_at: r.created_at.toISOString(),
  delivered_at: r.delivered_at ? r.delivered_at.toISOString() : null,
});

const escapeLike = (s: string) => s.replace(/[\\%_]/g, '\\$&');

/**
 * The QUEUED rows of an accepted send as parallel columns (id, copy_id, recipient,
 * recipient_domain, recipient_type) for `unnest`; ids are ULIDs, in order.
 */
export function queuedLogColumns(recipients: readonly QueuedRecipient[]): string[][] {
  return [
    recipients.map(() => ulid()),
    recipients.map((r) => r.copyId),
    recipients.map((r) => r.recipient),
    recipients.map((r) => r.recipientDomain),
    recipients.map((r) => r.recipientType),
  ];
}

/** The email log (table `email_logs`, one row per recipient of each copy), scoped to one tenant. */
export const emailLogs = {
  /**
   * One page of the tenant's log, newest first, and how many rows match in all. Every filter
   * narrows (AND). Throws InvalidCursorError for a page token that is not ours.
   */
  async list(
    db: Queryable,
    tenantId: string,
    q: LogsQuery,
  ): Promise<Page<EmailLogEntry> & { totalCount: number }> {
    const before = pageAfter(q.pageToken);

    const f = new SqlFilter('tenant_id', tenantId);
    const { params } = f;
    if (q.email !== undefined) f.add(q.email.toLowerCase(), (p) => `lower(recipient) = ${p}`);
    if (q.domain !== undefined) f.add(q.domain, (p) => `recipient_domain = ${p}`);
    if (q.refId !== undefined) f.add(q.refId, (p) => `ref_id = ${p}`);
    f.timeRange('created_at', q.startDate, q.endDate);
    if (q.status !== undefined) f.add(q.status, (p) => `status = ${p}`);
    if (q.subject !== undefined) f.add(`%${escapeLike(q.subject)}%`, (p) => `subject ILIKE ${p} ESCAPE '\\'`);
    if (q.campaignId !== undefined) f.add(q.campaignId, (p) => `campaign_id = ${p}`);
    if (q.recipientType !== undefined) f.add(q.recipientType, (p) => `recipient_type = ${p}`);
    f.timeRange('delivered_at', q.deliveredStartDate, q.deliveredEndDate);
    const filter = f.sql;
    const pageParams = [...params, q.pageSize + 1];
    const after = before === null ? '' : ` AND id < $${pageParams.push(before)}`;

    const [page, count] = await Promise.all([
      db.query<LogRow>(
        `SELECT id, ref_id, recipient, recipient_type, status, subject, mailer_id, campaign_id, message_id,
                created_at, delivered_at, last_event, failure_reason
           FROM email_logs
          WHERE ${filter}${after}
          ORDER BY id DESC LIMIT $${params.length + 1}`,
        pageParams,
      ),
      db.query<{ total: number }>(
        `SELECT count(*)::integer AS total FROM email_logs WHERE ${filter}`,
        params,
      ),
    ]);
    const { items, nextCursor } = toPage(page.rows, q.pageSize, (r) => r.id);
    return { items: items.map(toEntry), nextCursor, totalCount: count.rows[0]?.total ?? 0 };
  },
};

/**
 * Locks the given `email_logs` rows for the rest of the transaction (in id order, so concurrent
 * callers never deadlock) and returns the ids of those without a send outcome yet
 * (`send_outcome` NULL, migration 0006). The send service records an attempt's events only for
 * these and sets the outcome of terminal ones in the same transaction: a recipient leaves QUEUED
 * once, so of two processes that deliver the same copy at the same time (a redelivered command)
 * exactly one records the outcome. `advisoryKeys`: transaction-scoped advisory locks (hashed
 * text keys, taken in the given order) to hold first, in the same round trip.
 */
export async function lockUnfinishedLogRows(
  tx: Queryable,
  logIds: readonly string[],
  advisoryKeys: readonly string[] = [],
): Promise<Set<string>> {
  if (logIds.length === 0) return new Set();
  const ids = [...new Set(logIds)];
  if (advisoryKeys.length === 0) {
    const { rows } = await tx.query<{ id: string; finished: boolean }>(
      'SELECT id, send_outcome IS NOT NULL AS finished FROM email_logs WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE',
      [ids],
    );
    return new Set(rows.filter((r) => !r.finished).map((r) => r.id));
  }
  // One round trip: the advisory locks (in the given order) are all held before the first row
  // is locked, since no joined row leaves the join before the aggregate over them returned.
  const { rows } = await tx.query<{ id: string; finished: boolean }>(
    `WITH locks AS MATERIALIZED (
       SELECT count(pg_advisory_xact_lock(hashtextextended(k, 0))) AS n
         FROM (SELECT k FROM unnest($1::text[]) WITH ORDINALITY AS u(k, i) ORDER BY i) AS ordered
     )
     SELECT l.id, l.send_outcome IS NOT NULL AS finished
       FROM locks, email_logs l
      WHERE l.id = ANY($2::text[]) AND locks.n >= 0
      ORDER BY l.id FOR UPDATE OF l`,
    [advisoryKeys, ids],
  );
  return new Set(rows.filter((r) => !r.finished).map((r) => r.id));
}
