import {
  INCOMING_EMAIL_EVENT,
  type IncomingEmailContext,
  type IncomingEmailDetails,
  type IncomingEmailFile,
  type IncomingEmailPayload,
} from '@mailyard/contracts';
import libmime from 'libmime';
import { type AddressObject, type Attachment, type ParsedMail, simpleParser } from 'mailparser';

/**
 * Raw RFC 5322 message -> the spec's `INCOMING_EMAIL` object (docs/inbound.md "The INCOMING_EMAIL object").
 * Pure apart from parsing (no I/O): shared by the MX service (services/inbound-smtp) and IMAP
 * backfill, so live and historical mail have one shape.
 *
 * - Every `details` field is present; absent values are '' (arrays empty).
 * - `headers`: every header line, name (as first written) -> values in order, unfolded, RFC 2047
 *   words decoded, 8-bit bytes read as UTF-8 (Latin-1 when not valid UTF-8).
 * - Bodies and parts are decoded per Content-Transfer-Encoding and charset to UTF-8 by mailparser.
 * - `files`: attachments, inline images (contentId), other parts (signatures, calendars) and
 *   forwarded `message/rfc822` parts as one file each (the inner message is not merged into the
 *   body: `ignoreEmbedded`).
 * - A message that cannot be parsed becomes the spec's error form, never an exception: the
 *   receiver learns a mail arrived even when its MIME is unusable.
 */
export async function buildIncomingEmail(
  raw: Buffer,
  context: IncomingEmailContext,
): Promise<IncomingEmailPayload> {
  return (await buildIncomingEmails(raw, [context]))[0]!;
}

/**
 * buildIncomingEmail for several recipients of one message (the MX service: one event per
 * recipient), parsing the message once; each payload is its own object.
 */
export async function buildIncomingEmails(
  raw: Buffer,
  contexts: readonly IncomingEmailContext[],
): Promise<IncomingEmailPayload[]> {
  const problem = rawMessageProblem(raw);
  if (problem) return contexts.map((c) => errorForm(problem, c));
  let parsed: ParsedMail;
  try {
    parsed = await simpleParser(raw, {
      skipTextToHtml: true,
      skipTextLinks: true,
      skipImageLinks: true,
      keepCidLinks: true,
      // forwarded messages stay one message/rfc822 part (a file), not merged into the body
      ignoreEmbedded: true,
    } as Parameters<typeof simpleParser>[1]);
  } catch (err) {
    return contexts.map((c) => errorForm(`MIME parse failed: ${(err as Error).message}`, c));
  }
  return contexts.map((c) => {
    try {
      return { event: INCOMING_EMAIL_EVENT, details: detailsOf(parsed, c), success: true };
    } catch (err) {
      return errorForm(`extraction failed: ${(err as Error).message}`, c);
    }
  });
}

/** The error form (docs/inbound.md "The INCOMING_EMAIL object": MIME, encoding or extraction failures). */
export function incomingEmailError(error: string, context: IncomingEmailContext): IncomingEmailPayload {
  return errorForm(error, context);
}

function errorForm(error: string, context: IncomingEmailContext): IncomingEmailPayload {
  return {
    event: INCOMING_EMAIL_EVENT,
    details: { error, 'mailer-id': context.mailerId, 'webhook-id': context.webhookId },
    success: false,
  };
}

/** Inputs mailparser would silently turn into an empty mail: not a message at all. */
function rawMessageProblem(raw: Buffer): string | null {
  if (raw.length === 0) return 'empty message';
  const head = raw.subarray(0, Math.min(raw.length, 998)).toString('latin1');
  const firstLine = head.split(/\r?\n/, 1)[0] ?? '';
  if (!/^[!-9;-~]+[ \t]*:/.test(firstLine)) return 'message does not start with a header field';
  return null;
}

function detailsOf(parsed: ParsedMail, context: IncomingEmailContext): IncomingEmailDetails {
  const from = addressText(parsed.from);
  const replyTo = addressText(parsed.replyTo);
  return {
    subject: parsed.subject ?? '',
    from,
    'reply-to': replyTo === from ? '' : replyTo,
    to: addressText(parsed.to),
    cc: addressText(parsed.cc),
    bcc: addressText(parsed.bcc),
    date: rfc3339(parsed.date),
    recipient: context.recipient,
    'body-plain': parsed.text ?? '',
    'body-html': typeof parsed.html === 'string' ? parsed.html : '',
    'message-id': parsed.messageId ?? '',
    'in-reply-to': parsed.inReplyTo ?? '',
    references: Array.isArray(parsed.references) ? parsed.references.join(' ') : (parsed.references ?? ''),
    'thread-id': context.threadId ?? '',
    'content-type': topContentType(parsed),
    'user-agent': headerText(parsed, 'user-agent') || headerText(parsed, 'x-mailer'),
    headers: headerMap(parsed),
    files: parsed.attachments.map(fileOf),
    'webhook-id': context.webhookId,
    'mailer-id': context.mailerId,
    'mailer-service': context.mailerService,
    'label-ids': [...context.labelIds],
  };
}

function addressText(value: AddressObject | AddressObject[] | undefined): string {
  if (!value) return '';
  const list = Array.isArray(value) ? value : [value];
  return list
    .map((a) => a.text)
    .filter((t) => t.length > 0)
    .join(', ');
}

/** RFC 3339 UTC without fractional seconds; '' when absent or unparsable. */
function rfc3339(date: Date | undefined): string {
  if (!date || Number.isNaN(date.getTime())) return '';
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** The top-level media type (RFC 2045 default text/plain when the header is absent). */
function topContentType(parsed: ParsedMail): string {
  const value = parsed.headers.get('content-type') as { value?: string } | string | undefined;
  if (!value) return 'text/plain';
  const type = typeof value === 'string' ? value : (value.value ?? '');
  return type.toLowerCase();
}

function headerText(parsed: ParsedMail, name: string): string {
  const value = parsed.headers.get(name);
  return typeof value === 'string' ? value : '';
}

/**
 * Header name -> values. The names are the sender's: a null-prototype object, so `constructor`,
 * `__proto__`, `toString`, `hasOwnProperty` or `valueOf` are header names like any other (on a
 * plain object they read Object.prototype's members, and the message became the error form).
 */
function headerMap(parsed: ParsedMail): Record<string, string[]> {
  const out: Record<string, string[]> = Object.create(null);
  const nameOf = new Map<string, string>();
  for (const { key, line } of parsed.headerLines) {
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const written = line.slice(0, colon).trim();
    const name = nameOf.get(key) ?? written;
    nameOf.set(key, name);
    const value = decodeHeaderValue(line.slice(colon + 1));
    const values = out[name] ?? [];
    values.push(value);
    out[name] = values;
  }
  return out;
}

function decodeHeaderValue(rawValue: string): string {
  const unfolded = rawValue.replace(/\r?\n(?=[ \t])/g, '').trim();
  const text = eightBitToUtf8(unfolded);
  try {
    return libmime.decodeWords(text);
  } catch {
    return text;
  }
}

/** Header lines arrive as binary strings: re-read the bytes as UTF-8 when they are valid UTF-8. */
function eightBitToUtf8(value: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: detecting bytes above ASCII
  if (!/[^\x00-\x7f]/.test(value)) return value;
  const bytes = Buffer.from(value, 'latin1');
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return value;
  }
}

function fileOf(attachment: Attachment): IncomingEmailFile {
  const disposition = attachment.contentDisposition;
  const location = attachment.headers.get('content-location');
  const file: IncomingEmailFile = {
    filename: attachment.filename ?? '',
    contentType: attachment.contentType,
    content: attachment.content.toString('base64'),
    disposition: disposition === 'attachment' || disposition === 'inline' ? disposition : '',
    contentId: attachment.cid ?? '',
    contentLocation: typeof location === 'string' ? location : '',
    size: attachment.content.length,
  };
  return file;
}
