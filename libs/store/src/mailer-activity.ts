import {
  BusMessages,
  type ConfigType,
  type DeactivationReason,
  type MailerDeactivatedEvent,
} from '@mailyard/contracts';
import { type Db, writeOutbox } from '@mailyard/platform';

/** Provider errors are kept to this many characters in the event and the row. */
const PROVIDER_ERROR_MAX = 1000;

export type ActivityChange = 'changed' | 'unchanged' | 'not_found';

/**
 * Automatic deactivation (docs/api/mailers.md, docs/oauth.md "Token lifecycle"): an active
 * mailer whose OAuth refresh token was revoked or expired, or whose SMTP/provider authentication was rejected, becomes
 * `deactivated`, and in the same transaction a MAILER_DEACTIVATED event is written to the outbox.
 * Only an `active` mailer moves (a disabled or already deactivated one is `unchanged` and no
 * event is sent). Used by the send and IMAP workers; manual disable never emits the event.
 * `providerError` is the server's reply text; never pass credentials in it.
 */
export async function deactivateMailer(
  db: Db,
  tenantId: string,
  mailerId: string,
  reason: DeactivationReason,
  providerError = '',
): Promise<ActivityChange> {
  const error = providerError.trim().slice(0, PROVIDER_ERROR_MAX);
  return db.transaction(async (tx) => {
    const { rows } = await tx.query<{ state: string; config_type: ConfigType }>(
      'SELECT state, config_type FROM mailers WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL FOR UPDATE',
      [tenantId, mailerId],
    );
    const row = rows[0];
    if (!row) return 'not_found';
    if (row.state !== 'active') return 'unchanged';
    await tx.query(
      `UPDATE mailers SET state = 'deactivated', state_reason = $3, updated_at = now() WHERE tenant_id = $1 AND id = $2`,
      [tenantId, mailerId, reason],
    );
    const event: MailerDeactivatedEvent = {
      event: 'MAILER_DEACTIVATED',
      success: false,
      details: {
        mailer_id: mailerId,
        config_type: row.config_type,
        failed_reason: reason,
        ...(error ? { provider_error: error } : {}),
      },
    };
    await writeOutbox(tx, BusMessages.mailerDeactivated, event, { tenantId });
    return 'changed';
  });
}

/**
 * Re-activation after a successful re-authentication: `deactivated` -> `active`, no event.
 * Any other state is `unchanged`.
 */
export async function reactivateMailer(db: Db, tenantId: string, mailerId: string): Promise<ActivityChange> {
  const res = await db.query(
    `UPDATE mailers SET state = 'active', state_reason = NULL, updated_at = now()
      WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL AND state = 'deactivated'`,
    [tenantId, mailerId],
  );
  if (res.rowCount > 0) return 'changed';
  const { rows } = await db.query(
    'SELECT 1 FROM mailers WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL',
    [tenantId, mailerId],
  );
  return rows.length > 0 ? 'unchanged' : 'not_found';
}
