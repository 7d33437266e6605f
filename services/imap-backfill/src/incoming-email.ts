/**
 * The INCOMING_EMAIL payload of a message fetched from a mailbox: the shared builder of
 * libs/platform (mail/incoming-email.ts, the one inbound mail uses, so live, inbound and
 * historical mail have one shape) with `mailer-service: "imap"` and the folder as `label-ids`.
 * The mailer's incoming webhook is identified by the mailer, so `webhook-id` is the mailer id.
 */
import { buildIncomingEmail } from '@mailyard/platform';

export async function imapIncomingEmail(
  source: Buffer,
  m: { mailerId: string; email: string; folder: string },
): Promise<Record<string, unknown>> {
  const payload = await buildIncomingEmail(source, {
    recipient: m.email,
    webhookId: m.mailerId,
    mailerId: m.mailerId,
    mailerService: 'imap',
    labelIds: [m.folder],
  });
  return payload as unknown as Record<string, unknown>;
}
