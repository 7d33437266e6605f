/**
 * Writes one RFC 5322 message to bytes, byte for byte as nodemailer's MailComposer (and its
 * MimeNode.build()) writes the same fields, in one pass and without a MimeNode tree:
 *
 * - header order: the custom headers as given, then From, To, Cc, Reply-To, In-Reply-To,
 *   References, Subject, Message-ID, Date (each when set), then for a single-part message its
 *   Content-Transfer-Encoding, then MIME-Version and Content-Type last (headers.ts encodes and
 *   folds each);
 * - the body structure of multipart.ts, text parts encoded by encoding.ts, attachments as the
 *   finished parts of attachments.ts;
 * - the message ends with a line break.
 *
 * The custom headers must not be ones this writer sets itself (the caller drops the protected and
 * threading headers: From, To, Subject, Content-*, MIME-Version, Message-ID, ...); names are
 * written with header-key.ts's casing. message.test.ts compares the output with MailComposer's.
 */
import type { AttachmentPart } from './attachments';
import { pushHeader } from './headers';
import {
  type Part,
  type Pieces,
  boundaries,
  encodePart,
  layoutBody,
  partHeaders,
  writeBody,
} from './multipart';

export type Address = string | { name: string; address: string };

export interface MessageFields {
  /** Custom headers, written first in this order. */
  headers: Record<string, string>;
  from: Address;
  to?: Address[];
  cc?: Address[];
  replyTo?: string | undefined;
  inReplyTo?: string | undefined;
  references?: string | undefined;
  subject: string;
  /** With angle brackets. */
  messageId: string;
  date: Date;
  text?: string | undefined;
  html?: string | undefined;
  attachments: readonly AttachmentPart[];
  /** 16 hex digits shared by the message's boundaries; random when not given (tests fix it). */
  baseBoundary?: string;
}

/** The root headers after the custom ones, in the order they are written (field, header name). */
const ROOT_HEADERS: Array<[keyof MessageFields, string]> = [
  ['from', 'From'],
  ['to', 'To'],
  ['cc', 'Cc'],
  ['replyTo', 'Reply-To'],
  ['inReplyTo', 'In-Reply-To'],
  ['references', 'References'],
  ['subject', 'Subject'],
  ['messageId', 'Message-ID'],
  ['date', 'Date'],
];

/** The pieces joined, with a line break added unless they already end with one. */
function assemble(pieces: Pieces): Buffer | Promise<Buffer> {
  if (pieces.some((p) => typeof p === 'object' && !Buffer.isBuffer(p)))
    return Promise.all(pieces).then(assemble);
  const settled = pieces as Array<string | Buffer>;
  const last = settled[settled.length - 1];
  const end = typeof last === 'string' ? last.charCodeAt(last.length - 1) : last?.[last.length - 1];
  if (end !== 0x0a) settled.push(end === 0x0d ? '\n' : '\r\n');
  if (settled.every((p) => typeof p === 'string')) return Buffer.from(settled.join(''));
  return Buffer.concat(settled.map((p) => (typeof p === 'string' ? Buffer.from(p) : p)));
}

/** The message's bytes (see the file comment). */
export function writeMessage(fields: MessageFields): Buffer | Promise<Buffer> {
  const root: Part = layoutBody(fields);
  // A message of one pre-built part is that part as it is (MailComposer's raw root).
  if (root.kind === 'raw') return assemble([root.raw]);
  const lines: string[] = [];
  for (const [name, value] of Object.entries(fields.headers)) pushHeader(lines, name, value);
  for (const [field, name] of ROOT_HEADERS) {
    const value = fields[field];
    if (value && (!Array.isArray(value) || value.length > 0)) pushHeader(lines, name, value);
  }
  const bounds = boundaries(root, fields.baseBoundary);
  const encoded = encodePart(root);
  const [contentType, ...rest] = partHeaders(root, bounds.get(root), encoded);
  lines.push(...rest, 'MIME-Version: 1.0', contentType!);
  const out: Pieces = [`${lines.join('\r\n')}\r\n\r\n`];
  writeBody(root, encoded, bounds, out);
  return assemble(out);
}
