import {
  type SuppressionEntry,
  type SuppressionReasonValue,
  type SuppressionsQuery,
  addressKey,
} from '@mailyard/contracts';
import type { Queryable } from '@mailyard/platform';
import { type Page, pageAfterKey, toKeyPage } from './cursor';
import { SqlFilter } from './sql-filter';

/**
 * The tenant's suppression list (table `suppressions`, migrations 0004 and 0032): one row per
 * address (its `addressKey`, lowercase), the reason it is there and the send that caused it
 * (`ref_id`, null for manual and API additions). An address already on the list keeps its first
 * reason and ref_id. Every path that suppresses comes through `suppressions.add` (or `addMany`
 * for the API's batches, `unsubscribeIn` for unsubscribes); the send service reads the list
 * through `suppressedKeysSql`.
 */

/**
 * The reasons by name, for the code that suppresses (values are the API's, docs/api/suppressions.md).
 * `unsubscribed` names the reason `unsubscribe` (the key predates migration 0032).
 */
export const SuppressionReason = {
  unsubscribed: 'unsubscribe',
  hardBounce: 'hard_bounce',
  spamComplaint: 'spam_complaint',
  manual: 'manual',
} as const satisfies Record<string, SuppressionReasonValue>;
export type { SuppressionReasonValue } from '@mailyard/contracts';

type Row = { email: string; reason: SuppressionReasonValue; ref_id: string | null; created_at: Date };
type ListRow = Row & { cursor_at: string };

const COLUMNS = 'email, reason, ref_id, created_at';
/** created_at as exact UTC text (microseconds), whatever the session time zone: the cursor's first part. */
const CURSOR_AT = `to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
const CURSOR_AT_FORMAT = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;
/** A stored key: printable ASCII (quoted local parts may hold spaces), at most 254 characters. */
const CURSOR_EMAIL_FORMAT = /^[\x20-\x7e]{3,254}$/;

const toEntry = (r: Row): SuppressionEntry => ({
  email: r.email,
  reason: r.reason,
  ref_id: r.ref_id,
  created_at: r.created_at.toISOString(),
});

const escapeLike = (s: string) => s.replace(/[\\%_]/g, '\\$&');

export const suppressions = {
  /**
   * Suppresses `email` for `reason` (the send `refId` caused it, when known); true when it was not
   * suppressed before. The argument order is kept for every caller; refId came last (0032).
   */
  async add(
    db: Queryable,
    tenantId: string,
    email: string,
    reason: SuppressionReasonValue = 'unsubscribe',
    refId?: string | null,
  ): Promise<boolean> {
    const res = await db.query(
      `INSERT INTO suppressions (tenant_id, email, reason, ref_id) VALUES ($1, $2, $3, $4)
       ON CONFLICT (tenant_id, email) DO NOTHING`,
      [tenantId, addressKey(email), reason, refId ?? null],
    );
    return res.rowCount > 0;
  },

  /**
   * Suppresses a batch of address keys (already `addressKey`ed) in one round trip; how many were
   * new. Inserted in key order, so two concurrent batches never wait on each other in a cycle.
   */
  async addMany(
    db: Queryable,
    tenantId: string,
    keys: readonly string[],
    reason: SuppressionReasonValue,
  ): Promise<{ added: number; existing: number }> {
    const unique = [...new Set(keys)];
    if (unique.length === 0) return { added: 0, existing: 0 };
    const { rows } = await db.query<{ added: number }>(
      `WITH ins AS (
         INSERT INTO suppressions (tenant_id, email, reason)
         SELECT $1, k, $3 FROM unnest($2::text[]) AS k ORDER BY k
         ON CONFLICT (tenant_id, email) DO NOTHING
         RETURNING 1)
       SELECT count(*)::integer AS added FROM ins`,
      [tenantId, unique, reason],
    );
    const added = rows[0]?.added ?? 0;
    return { added, existing: unique.length - added };
  },

  /** The tenant's entry for `email`, null when it is not suppressed (or is another tenant's). */
  async get(db: Queryable, tenantId: string, email: string): Promise<SuppressionEntry | null> {
    const { rows } = await db.query<Row>(
      `SELECT ${COLUMNS} FROM suppressions WHERE tenant_id = $1 AND email = $2`,
      [tenantId, addressKey(email)],
    );
    return rows[0] ? toEntry(rows[0]) : null;
  },

  /**
   * One page of the tenant's list, newest first (created_at, then email, both descending: the
   * index of migration 0032), and how many entries match in all. `email` is a substring of the
   * stored key (LIKE over the tenant's rows: cost grows with the tenant's list, see
   * docs/operations.md "Suppressions"). Throws InvalidCursorError for a page token not ours.
   */
  async list(
    db: Queryable,
    tenantId: string,
    q: SuppressionsQuery,
  ): Promise<Page<SuppressionEntry> & { totalCount: number }> {
    const after = pageAfterKey(
      q.pageToken,
      (k) => k.length === 2 && CURSOR_AT_FORMAT.test(k[0]!) && CURSOR_EMAIL_FORMAT.test(k[1]!),
    );
    const f = new SqlFilter('tenant_id', tenantId);
    const { params, where } = f;
    if (q.email !== undefined)
      f.add(`%${escapeLike(addressKey(q.email))}%`, (p) => `email LIKE ${p} ESCAPE '\\'`);
    if (q.reason !== undefined) f.add(q.reason, (p) => `reason = ${p}`);
    const filter = f.sql;
    const countParams = [...params];
    if (after) {
      params.push(after[0], after[1]);
      where.push(`(created_at, email) < ($${params.length - 1}::timestamptz, $${params.length})`);
    }
    params.push(q.pageSize + 1);
    const [page, count] = await Promise.all([
      db.query<ListRow>(
        `SELECT ${COLUMNS}, ${CURSOR_AT} AS cursor_at FROM suppressions
          WHERE ${where.join(' AND ')}
          ORDER BY created_at DESC, email DESC LIMIT $${params.length}`,
        params,
      ),
      db.query<{ total: number }>(
        `SELECT count(*)::integer AS total FROM suppressions WHERE ${filter}`,
        countParams,
      ),
    ]);
    const { items, nextCursor } = toKeyPage(page.rows, q.pageSize, (r) => [r.cursor_at, r.email]);
    return { items: items.map(toEntry), nextCursor, totalCount: count.rows[0]?.total ?? 0 };
  },

  /** Lifts the suppression of `email`; true when it was suppressed. */
  async remove(db: Queryable, tenantId: string, email: string): Promise<boolean> {
    const res = await db.query('DELETE FROM suppressions WHERE tenant_id = $1 AND email = $2', [
      tenantId,
      addressKey(email),
    ]);
    return res.rowCount > 0;
  },
};

/**
 * The one suppression rule, as SQL for statements that fold it into a bigger round trip (the
 * send service's copy loader, libs/store copies.ts) and for isSuppressed: the suppressed keys
 * (`addressKey`, lowercase: addresses are ASCII) among `keys` (a text[] expression) of tenant
 * `tenant` (a text expression).
 */
export function suppressedKeysSql(tenant: string, keys: string): string {
  return `SELECT x.email FROM suppressions x WHERE x.tenant_id = ${tenant} AND x.email = ANY(${keys})`;
}

/** addressKey in SQL (see suppressedKeysSql). */
export const addressKeySql = (expr: string) => `lower(${expr})`;

/**
 * Which of `emails` the tenant has suppressed: the returned set holds their lowercased forms
 * (test with `set.has(addressKey(email))`). One query for any number of addresses.
 */
export async function isSuppressed(
  db: Queryable,
  tenantId: string,
  emails: readonly string[],
): Promise<Set<string>> {
  if (emails.length === 0) return new Set();
  const keys = [...new Set(emails.map(addressKey))];
  const { rows } = await db.query<{ email: string }>(suppressedKeysSql('$1', '$2::text[]'), [tenantId, keys]);
  return new Set(rows.map((r) => r.email));
}

/**
 * The one rule of an unsubscribe, wherever it comes from (the tracking service's one-click POST,
 * the inbound service's mailto unsubscribe): suppress the address (reason `unsubscribe` unless
 * told otherwise, `refId` the send whose link or address was used), then record
 * MAIL_UNSUBSCRIBED (`record`, inside the same transaction `tx`) only when this newly suppressed
 * it, so a repeated unsubscribe records nothing. Returns what `record` returned, or null when the
 * address was already suppressed.
 */
export async function unsubscribeIn<T>(
  tx: Queryable,
  tenantId: string,
  email: string,
  record: () => Promise<T>,
  reason: SuppressionReasonValue = SuppressionReason.unsubscribed,
  refId?: string | null,
): Promise<T | null> {
  return (await suppressions.add(tx, tenantId, email, reason, refId)) ? record() : null;
}
