import { addressKey } from '@mailyard/contracts';
import type { Queryable } from '@mailyard/platform';

/** Unsubscribed addresses per tenant (table `suppressions`), compared lowercased. */
export const suppressions = {
  /** Suppresses `email`; true when it was not suppressed before. */
  async add(db: Queryable, tenantId: string, email: string, reason = 'unsubscribed'): Promise<boolean> {
    const res = await db.query(
      'INSERT INTO suppressions (tenant_id, email, reason) VALUES ($1, $2, $3) ON CONFLICT (tenant_id, email) DO NOTHING',
      [tenantId, addressKey(email), reason],
    );
    return res.rowCount > 0;
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
 * the inbound service's mailto unsubscribe): suppress the address, then record MAIL_UNSUBSCRIBED
 * (`record`, inside the same transaction `tx`) only when this newly suppressed it, so a repeated
 * unsubscribe records nothing. Returns what `record` returned, or null when the address was
 * already suppressed.
 */
export async function unsubscribeIn<T>(
  tx: Queryable,
  tenantId: string,
  email: string,
  record: () => Promise<T>,
  reason = 'unsubscribed',
): Promise<T | null> {
  return (await suppressions.add(tx, tenantId, email, reason)) ? record() : null;
}
