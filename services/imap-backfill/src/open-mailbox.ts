/**
 * Opens the MailboxClient of a mailer: loads its connection settings and unseals its password
 * (libs/store), then picks the provider client. Basic IMAP today; OAuth mailboxes (Gmail API,
 * Graph) plug in here with their own client.
 */
import type { Queryable, Sealer } from '@mailyard/platform';
import { type StoredMailer, mailers } from '@mailyard/store';
import { connectImap } from './clients/imap/imap-mailbox';
import { type MailboxClient, MailboxError } from './mailbox/mailbox-client';
import type { BackfillSettings } from './settings';

export type OpenMailbox = (mailer: StoredMailer) => Promise<MailboxClient>;

export function mailboxOpener(db: Queryable, sealer: Sealer, settings: BackfillSettings): OpenMailbox {
  return async (mailer) => {
    if (mailer.connectionType !== 'basic')
      throw new MailboxError('terminal', `${mailer.connectionType} mailboxes are not supported yet`);
    const password = await mailers.password(db, sealer, mailer.tenantId, mailer.id);
    const c = mailer.config;
    if (!password || !c.host || !c.port || !c.username)
      throw new MailboxError('terminal', 'the mailer has no IMAP credentials');
    return connectImap(
      { host: c.host, port: c.port, username: c.username, password },
      { guard: settings.guard, timeoutMs: settings.imapTimeoutMs, fetchBatch: settings.fetchBatch },
    );
  };
}
