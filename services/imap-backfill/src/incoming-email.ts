/**
 * The INCOMING_EMAIL payload of a message fetched from a mailbox: the shared builder of
 * libs/platform (mail/incoming-email.ts, the one inbound mail uses, so live, inbound and
 * historical mail have one shape) with the mailbox's `mailer-service` (imap, gmail, outlook),
 * the provider's thread as `thread-id` ('' for IMAP) and the message's labels as `label-ids`
 * (Gmail labelIds, the Graph folder; IMAP: the folder). The mailer's incoming webhook is
 * identified by the mailer, so `webhook-id` is the mailer id.
 */
import { buildIncomingEmail } from '@mailyard/platform';
import type { RawMessage } from './mailbox/mailbox-client';

export async function mailboxIncomingEmail(
  msg: Pick<RawMessage, 'source' | 'threadId' | 'labelIds'>,
  m: { mailerId: string; email: string; service: string; folder: string },
): Promise<Record<string, unknown>> {
  const payload = await buildIncomingEmail(msg.source, {
    recipient: m.email,
    webhookId: m.mailerId,
    mailerId: m.mailerId,
    mailerService: m.service,
    labelIds: msg.labelIds ?? [m.folder],
    ...(msg.threadId ? { threadId: msg.threadId } : {}),
  });
  return payload as unknown as Record<string, unknown>;
}
