/**
 * Recipients an API provider accepted and will report on by callback (SparkPost; migration 0034):
 * the send service records the acceptance instead of an event, so the recipient is not sent
 * again (copies.ts reads it as finished for sending; the crash recovery skips it) while its log
 * entry stays QUEUED without a send outcome until the provider's callback records one.
 */
import type { Queryable } from '@mailyard/platform';

/**
 * Marks the tenant's log rows `logIds` accepted by the provider as `transmissionId` on `attempt`
 * (the log's `attempts` moves up to it). Rows with a send outcome already are left alone.
 * Returns how many rows were marked.
 */
export async function recordProviderAcceptance(
  db: Queryable,
  tenantId: string,
  logIds: readonly string[],
  transmissionId: string,
  attempt: number,
): Promise<number> {
  if (logIds.length === 0) return 0;
  const res = await db.query(
    `UPDATE email_logs SET provider_accepted_at = COALESCE(provider_accepted_at, now()),
            provider_transmission_id = $3, attempts = GREATEST(attempts, $4), updated_at = now()
      WHERE tenant_id = $1 AND id = ANY($2::text[]) AND send_outcome IS NULL`,
    [tenantId, [...new Set(logIds)], transmissionId, attempt],
  );
  return res.rowCount ?? 0;
}
