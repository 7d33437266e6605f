/**
 * The INCOMING_EMAIL payload of a message fetched from a mailbox: the shared builder of
 * libs/platform (mail/incoming-email.ts, the one inbound mail uses, so live, inbound and
 * historical mail have one shape) with the mailbox's `mailer-service` (imap, gmail, outlook),
 * the provider's thread as `thread-id` ('' for IMAP) and the message's labels as `label-ids`
 * (Gmail labelIds, the Graph folder; IMAP: the folder). The mailer's incoming webhook is
 * identified by the mailer, so `webhook-id` is the mailer id. A message over `maxBytes` is the
 * error form saying so (mailbox/too-large.ts), for backfill and live sync alike.
 */
import { buildIncomingEmail, incomingEmailError } from '@mailyard/platform';
import type { RawMessage } from './mailbox/mailbox-client';
import { oversizeOf, tooLargeError } from './mailbox/too-large';
import { mailboxTooLarge } from './metrics';

export async function mailboxIncomingEmail(
  msg: Pick<RawMessage, 'id' | 'receivedAt' | 'source' | 'oversize' | 'threadId' | 'labelIds'>,
  m: { mailerId: string; email: string; service: string; folder: string; maxBytes: number },
): Promise<Record<string, unknown>> {
  const context = {
    recipient: m.email,
    webhookId: m.mailerId,
    mailerId: m.mailerId,
    mailerService: m.service,
    labelIds: msg.labelIds ?? [m.folder],
    ...(msg.threadId ? { threadId: msg.threadId } : {}),
  };
  const size = oversizeOf(msg, m.maxBytes);
  if (size !== null) {
    mailboxTooLarge.inc();
    return incomingEmailError(tooLargeError(msg, m.folder, size, m.maxBytes), context) as unknown as Record<
      string,
      unknown
    >;
  }
  const payload = await buildIncomingEmail(msg.source, context);
  return payload as unknown as Record<string, unknown>;
}
