/**
 * The send service's one MIME writer: `buildMessage` turns one copy (the stored request, the
 * copy's recipients and rendered content) into its RFC 5322 bytes and Message-ID.
 *
 * - Message-ID `<svc_mailer_{id}@SERVICE_DOMAIN>`. `{id}` is the custom `Message-ID` header's
 *   value without angle brackets (characters outside RFC 5322 atext and `.` become `_`, so the
 *   result stays one valid msg-id); otherwise the copy id (`<ref_id ULID>.<n>`), so every attempt
 *   and every redelivery of a copy carries the same Message-ID and receivers can deduplicate.
 * - In-Reply-To / References from the custom headers; `X-Is-Svc: true` marks service-sent mail.
 * - To/Cc with display names from the copy's recipients; Bcc recipients are envelope-only and
 *   never appear in a header. Reply-To from `replyTo`.
 * - Other custom headers as given (the gateway refuses the ones the service owns). `Thread-Id`
 *   is a Gmail API parameter, not a header: it is not written.
 * - Attachments: `disposition: inline` with `content_id` become related parts referenced by
 *   `cid:`; others are regular attachments. They are encoded once per send (attachments.ts).
 *
 * Inside: message.ts writes the bytes (header order and layout as nodemailer's MailComposer
 * writes them), headers.ts and header-key.ts the header lines, encoding.ts the bodies,
 * multipart.ts the structure.
 */
import type { CopyRecipient, StoredSendRequest } from '@mailyard/contracts';
import { SERVICE_MESSAGE_ID_PREFIX, isProtectedHeader, isThreadingHeader } from '@mailyard/contracts';
import type { RenderedCopy } from '../render';
import { attachmentParts } from './attachments';
import { type Address, writeMessage } from './message';

export interface BuildInput {
  request: Pick<StoredSendRequest, 'from' | 'replyTo' | 'headers' | 'attachments'>;
  /** The copy's recipients as planned by planCopies (to, cc, bcc; with display names). */
  recipients: CopyRecipient[];
  rendered: RenderedCopy;
  copyId: string;
  serviceDomain: string;
  date?: Date;
  /** Headers the service adds (tracking's List-Unsubscribe); they replace custom ones of the same name. */
  serviceHeaders?: Record<string, string>;
}

export interface BuiltMessage {
  raw: Buffer;
  /** The Message-ID header value, with angle brackets. */
  messageId: string;
}

function headerValue(headers: Record<string, string> | undefined, name: string): string | undefined {
  if (!headers) return undefined;
  const key = Object.keys(headers).find((k) => k.toLowerCase() === name);
  return key === undefined ? undefined : headers[key];
}

/** `<svc_mailer_{id}@domain>` for a custom Message-ID value or a generated id. */
export function serviceMessageId(id: string, serviceDomain: string): string {
  const unique =
    id
      .trim()
      .replace(/^<+|>+$/g, '')
      .replace(/[^A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]/g, '_') || '_';
  return `<${SERVICE_MESSAGE_ID_PREFIX}${unique}@${serviceDomain}>`;
}

export async function buildMessage(input: BuildInput): Promise<BuiltMessage> {
  const { request, recipients, rendered } = input;
  const custom = request.headers;
  const customId = headerValue(custom, 'message-id');
  const messageId = serviceMessageId(customId ?? input.copyId, input.serviceDomain);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(custom ?? {})) {
    if (isThreadingHeader(name) || isProtectedHeader(name)) continue;
    headers[name] = value;
  }
  for (const [name, value] of Object.entries(input.serviceHeaders ?? {})) {
    for (const k of Object.keys(headers)) if (k.toLowerCase() === name.toLowerCase()) delete headers[k];
    headers[name] = value;
  }
  headers['X-Is-Svc'] = 'true';
  const address = (r: { email: string; name?: string }): Address =>
    r.name ? { name: r.name, address: r.email } : r.email;
  const raw = await writeMessage({
    headers,
    from: address(request.from),
    to: recipients.filter((r) => r.type === 'to').map(address),
    cc: recipients.filter((r) => r.type === 'cc').map(address),
    ...(request.replyTo ? { replyTo: request.replyTo } : {}),
    inReplyTo: headerValue(custom, 'in-reply-to'),
    references: headerValue(custom, 'references'),
    subject: rendered.subject,
    messageId,
    date: input.date ?? new Date(),
    text: rendered.text,
    html: rendered.html,
    attachments: await attachmentParts(request),
  });
  return { raw, messageId };
}
