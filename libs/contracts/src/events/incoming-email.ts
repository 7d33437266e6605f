import { z } from 'zod';

/**
 * The `INCOMING_EMAIL` event (docs/inbound.md "The INCOMING_EMAIL object"): posted as a single object to an
 * inbound domain's webhook (live SMTP mail) or to an IMAP-capable mailer's webhook (IMAP
 * backfill). Both producers build it with the same pure builder (libs/platform mail/incoming-email)
 * so receivers see one shape. Every `details` field is always present; absent values are ''.
 */
export const INCOMING_EMAIL_EVENT = 'INCOMING_EMAIL';

export const incomingEmailFileSchema = z.object({
  filename: z.string(),
  contentType: z.string(),
  /** Decoded per Content-Transfer-Encoding, then base64. */
  content: z.string(),
  disposition: z.enum(['attachment', 'inline', '']),
  /** Without angle brackets, as used in `cid:` URLs; '' when the part has no Content-ID. */
  contentId: z.string(),
  contentLocation: z.string(),
  size: z.number().int().nonnegative().optional(),
});
export type IncomingEmailFile = z.infer<typeof incomingEmailFileSchema>;

export const incomingEmailDetailsSchema = z.object({
  subject: z.string(),
  from: z.string(),
  'reply-to': z.string(),
  to: z.string(),
  cc: z.string(),
  bcc: z.string(),
  date: z.string(),
  recipient: z.string(),
  'body-plain': z.string(),
  'body-html': z.string(),
  'message-id': z.string(),
  'in-reply-to': z.string(),
  references: z.string(),
  'thread-id': z.string(),
  'content-type': z.string(),
  'user-agent': z.string(),
  headers: z.record(z.array(z.string())),
  files: z.array(incomingEmailFileSchema),
  'webhook-id': z.string(),
  'mailer-id': z.string(),
  'mailer-service': z.string(),
  'label-ids': z.array(z.string()),
});
export type IncomingEmailDetails = z.infer<typeof incomingEmailDetailsSchema>;

export const incomingEmailEventSchema = z.object({
  event: z.literal(INCOMING_EMAIL_EVENT),
  details: incomingEmailDetailsSchema,
  success: z.literal(true),
});
export type IncomingEmailEvent = z.infer<typeof incomingEmailEventSchema>;

/** Error form for MIME, encoding or extraction failures: the mail is reported, never dropped. */
export const incomingEmailErrorEventSchema = z.object({
  event: z.literal(INCOMING_EMAIL_EVENT),
  details: z.object({ error: z.string(), 'mailer-id': z.string(), 'webhook-id': z.string() }),
  success: z.literal(false),
});
export type IncomingEmailErrorEvent = z.infer<typeof incomingEmailErrorEventSchema>;

export type IncomingEmailPayload = IncomingEmailEvent | IncomingEmailErrorEvent;

/** Where the message came from and who receives the event; copied into `details` verbatim. */
export interface IncomingEmailContext {
  /** The inbound address that received it ('' when unknown, e.g. some IMAP folders). */
  recipient: string;
  webhookId: string;
  mailerId: string;
  /** `smtp` for the MX service, `imap`, `gmail`, `outlook`... for backfill. */
  mailerService: string;
  labelIds: string[];
  /** Provider thread id; '' (default) for SMTP and IMAP. */
  threadId?: string;
}
