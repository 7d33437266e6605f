/**
 * Opens the MailboxClient of a mailer by how it connects:
 * - basic: its connection settings and sealed password (libs/store) -> IMAP (clients/imap);
 * - oauth: its grant's provider -> the Gmail API (clients/gmail) or Microsoft Graph
 *   (clients/graph), with the mailer's token source from the OAuth token lifecycle
 *   (libs/providers oauthAccessTokens: refresh ahead of expiry, revocation -> deactivation).
 * Without the token lifecycle (`oauth` not given) OAuth mailboxes cannot be opened.
 */
import type { Logger, Queryable, Sealer } from '@mailyard/platform';
import { GmailClient, GraphClient, type OAuthAccessTokens } from '@mailyard/providers';
import { type StoredMailer, mailers } from '@mailyard/store';
import { mailerTokenSource } from './clients/api/token-source';
import { GmailMailbox } from './clients/gmail/gmail-mailbox';
import { GraphMailbox } from './clients/graph/graph-mailbox';
import { connectImap } from './clients/imap/imap-mailbox';
import { type MailboxClient, MailboxError } from './mailbox/mailbox-client';
import type { BackfillSettings } from './settings';

export type OpenMailbox = (mailer: StoredMailer) => Promise<MailboxClient>;

export interface OAuthMailboxDeps {
  tokens: OAuthAccessTokens;
  logger?: Logger;
}

export function mailboxOpener(
  db: Queryable,
  sealer: Sealer,
  settings: BackfillSettings,
  oauth?: OAuthMailboxDeps,
): OpenMailbox {
  return async (mailer) => {
    if (mailer.connectionType === 'oauth') return openApiMailbox(mailer, settings, oauth);
    if (mailer.connectionType !== 'basic')
      throw new MailboxError('terminal', `${mailer.connectionType} mailers have no mailbox`);
    const password = await mailers.password(db, sealer, mailer.tenantId, mailer.id);
    const c = mailer.config;
    if (!password || !c.host || !c.port || !c.username)
      throw new MailboxError('terminal', 'the mailer has no IMAP credentials');
    return connectImap(
      { host: c.host, port: c.port, username: c.username, password },
      {
        guard: settings.guard,
        timeoutMs: settings.imapTimeoutMs,
        commandTimeoutMs: settings.imapCommandTimeoutMs,
        maxMessageBytes: settings.maxMessageBytes,
        fetchBatch: settings.fetchBatch,
      },
    );
  };
}

function openApiMailbox(
  mailer: StoredMailer,
  settings: BackfillSettings,
  oauth: OAuthMailboxDeps | undefined,
): MailboxClient {
  if (!oauth) throw new MailboxError('terminal', 'OAuth mailboxes are not available in this process');
  if (!mailer.oauth) throw new MailboxError('terminal', 'the mailer has no OAuth grant');
  const tokens = mailerTokenSource(oauth.tokens, mailer.tenantId, mailer.id);
  const options = { concurrency: settings.apiConcurrency };
  if (mailer.oauth.provider === 'google')
    return new GmailMailbox(
      new GmailClient(tokens, { apiUrl: settings.providers.GMAIL_API_URL, pageSize: 500 }),
      options,
    );
  return new GraphMailbox(
    new GraphClient(tokens, { graphUrl: settings.providers.MICROSOFT_GRAPH_URL, pageSize: 500 }),
    { ...options, ...(oauth.logger ? { logger: oauth.logger } : {}) },
  );
}
