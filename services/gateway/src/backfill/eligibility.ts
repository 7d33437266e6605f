/**
 * Who may start a history backfill (docs/api/backfill.md; a mailer
 * without a webhook is 422): the mailer exists for this tenant (else 404),
 * is IMAP-capable (send-only mailers 422, `oauth_smtp` included), has credentials (an IMAP
 * password, or an OAuth grant read through the Gmail API / Graph) and an incoming webhook (422),
 * and is active (a disabled or deactivated mailer cannot fetch mail: 422).
 */
import { BackfillErrorText, IMAP_CAPABLE_CONFIG_TYPES } from '@mailyard/contracts';
import { type Queryable, notFound, unprocessable } from '@mailyard/platform';
import { type StoredMailer, mailers } from '@mailyard/store';

export async function assertBackfillEligible(
  db: Queryable,
  tenantId: string,
  mailerId: string,
): Promise<StoredMailer> {
  const mailer = await mailers.get(db, tenantId, mailerId);
  if (!mailer) throw notFound(BackfillErrorText.mailerNotFound);
  if (!IMAP_CAPABLE_CONFIG_TYPES.includes(mailer.configType)) throw unprocessable(BackfillErrorText.sendOnly);
  if (!mailer.webhook) throw unprocessable(BackfillErrorText.noWebhook);
  if (mailer.connectionType === 'basic' && !mailer.passwordSet)
    throw unprocessable(BackfillErrorText.noCredentials);
  if (mailer.connectionType === 'oauth' && !mailer.oauth)
    throw unprocessable(BackfillErrorText.noCredentials);
  if (mailer.state !== 'active')
    throw unprocessable(BackfillErrorText.mailerInactive, `state: ${mailer.state}`);
  return mailer;
}
