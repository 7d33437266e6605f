/**
 * The common message shapes (a text part, an HTML part, or both as multipart/alternative; no
 * attachments) written straight to bytes from MailComposer's own options, byte for byte what
 * `new MailComposer(mail).compile()` + mime-serialize.ts (and so MimeNode.build()) write:
 * the same header order (custom headers, then From, To, Cc, Reply-To, In-Reply-To, References,
 * Subject, Message-ID, Date, then Content-Transfer-Encoding of a single part, MIME-Version and
 * Content-Type last), every header value encoded by nodemailer's own MimeNode.encodeHeaderValue
 * and folded by its foldLines, the body's transfer encoding chosen by MimeNode's rule (7bit when
 * plain and no line over 76, else quoted-printable or base64 by the share of non-Latin
 * characters) and encoded by nodemailer's encoders, the boundary nodemailer's
 * (`--_NmP-<base>-Part_1`, 8 random bytes per message unless `baseBoundary` is given).
 *
 * Why: MailComposer builds a tree of three MimeNodes per copy (a random boundary base each,
 * headers kept in arrays scanned on every get/set, Content-Type parsed and rebuilt per node, the
 * transfer encoding worked out twice per part, each time counting the body's characters): about
 * half of the MIME build's CPU for the message a batch send sends per recipient.
 *
 * Returns null for every other input (attachments, raw, calendar events, AMP, options it does not
 * interpret, custom headers that MailComposer would merge with its own or treat specially, empty
 * bodies, content larger than SYNC_MAX_BYTES or quoted-printable content over one encoder slice),
 * and the caller uses MailComposer as before.
 * direct-mime.test.ts compares both over a generated corpus.
 */
import { randomBytes } from 'node:crypto';
import * as base64 from 'nodemailer/lib/base64';
import type MailComposer from 'nodemailer/lib/mail-composer';
import { buildHeaderValue, foldLines, hasLongerLines, isPlainText } from 'nodemailer/lib/mime-funcs';
import MimeNode from 'nodemailer/lib/mime-node';
import { memoizeHeaderKeys } from './mime-header-key';
import { SYNC_MAX_BYTES, qpLikeEncoder } from './mime-serialize';

export type MailOptions = NonNullable<ConstructorParameters<typeof MailComposer>[0]>;

/** Options this writer interprets; any other option set (truthy) sends the message to MailComposer. */
const KNOWN = new Set([
  'from',
  'to',
  'cc',
  'replyTo',
  'inReplyTo',
  'references',
  'subject',
  'messageId',
  'date',
  'text',
  'html',
  'attachments',
  'headers',
  'baseBoundary',
  'disableFileAccess',
  'disableUrlAccess',
]);

/**
 * Normalized header names MailComposer sets itself, merges with a custom header of the same
 * name (setHeader), adds at the root or formats specially: a custom header with one of these
 * names leaves the message to MailComposer.
 */
const RESERVED = new Set([
  'From',
  'Sender',
  'To',
  'Cc',
  'Bcc',
  'Reply-To',
  'In-Reply-To',
  'References',
  'Subject',
  'Message-ID',
  'Date',
  'MIME-Version',
  'Content-Type',
  'Content-Transfer-Encoding',
  'Content-Disposition',
]);

/** MimeNode internals this writer calls (the same code MailComposer's nodes run). */
interface NodeInternals {
  encodeHeaderValue(key: string, value: unknown): string;
  _normalizeHeaderKey(key: string): string;
  _getTextEncoding(value: string): 'Q' | 'B';
}

// Header names are normalized through the memoized rule (mime-header-key.ts), as the tree's are.
memoizeHeaderKeys();

/**
 * Boundary bases: 8 random bytes per message as MimeNode draws them, taken from a pool filled
 * 512 messages at a time (a synchronous randomBytes call per message was a seventh of the build).
 */
const BASE_BYTES = 8;
const pool = { bytes: Buffer.alloc(0), at: 0 };
export function randomBoundaryBase(): string {
  if (pool.at + BASE_BYTES > pool.bytes.length) {
    pool.bytes = randomBytes(BASE_BYTES * 512);
    pool.at = 0;
  }
  pool.at += BASE_BYTES;
  return pool.bytes.toString('hex', pool.at - BASE_BYTES, pool.at);
}

/** A node used only for its header encoding (no per-node state is read: textEncoding is unset). */
const encoder = new MimeNode() as unknown as NodeInternals;

/** MailComposer's root headers in the order compile() sets them (option name, header name). */
const ROOT_HEADERS: Array<[keyof MailOptions, string]> = [
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

// biome-ignore lint/suspicious/noControlCharactersInRegex: the characters MimeNode strips
const boundaryControls = /[\x00-\x1f\x7f]+/g;

/** One body part: its transfer encoding and encoded content (MimeNode.setContent + getTransferEncoding). */
function encodeBody(content: string): { encoding: string; body: string } | null {
  if (isPlainText(content) && !hasLongerLines(content, 76)) return { encoding: '7bit', body: content };
  if (encoder._getTextEncoding(content) === 'B')
    return { encoding: 'base64', body: base64.wrap(base64.encode(content), 76) };
  const body = qpLikeEncoder(content);
  return body === null ? null : { encoding: 'quoted-printable', body };
}

const tooLarge = (s: string) => s.length > SYNC_MAX_BYTES / 3 && Buffer.byteLength(s) > SYNC_MAX_BYTES;

/** Appends `Key: value` folded as MimeNode.buildHeaders does, unless the encoded value is blank. */
function pushHeader(lines: string[], key: string, value: unknown): void {
  const encoded = encoder.encodeHeaderValue(key, value);
  if (!(encoded || '').toString().trim()) return;
  lines.push(foldLines(`${key}: ${encoded}`, 76));
}

/** The message MailComposer would write for `mail`, or null when it is not one of the shapes here. */
export function directMime(mail: MailOptions): Buffer | null {
  const options = mail as Record<string, unknown>;
  for (const [name, value] of Object.entries(options)) if (value && !KNOWN.has(name)) return null;
  if (Array.isArray(mail.attachments) ? mail.attachments.length > 0 : mail.attachments) return null;
  if (!mail.messageId || !(mail.date instanceof Date)) return null;
  // MailComposer skips an empty text or html; a message with neither is another shape.
  const parts: Array<{ type: string; content: string }> = [];
  for (const [content, type] of [
    [mail.text, 'text/plain; charset=utf-8'],
    [mail.html, 'text/html; charset=utf-8'],
  ] as const) {
    if (!content) continue;
    if (typeof content !== 'string' || tooLarge(content)) return null;
    parts.push({ type, content });
  }
  if (parts.length === 0) return null;

  const lines: string[] = [];
  const custom = mail.headers ?? {};
  if (typeof custom !== 'object' || Array.isArray(custom)) return null;
  // addHeader({key, value}) reads such an object as one header.
  if ('key' in custom || 'value' in custom) return null;
  for (const [name, value] of Object.entries(custom)) {
    if (typeof value !== 'string') return null;
    const key = encoder._normalizeHeaderKey(name);
    if (RESERVED.has(key)) return null;
    pushHeader(lines, key, value);
  }
  for (const [option, key] of ROOT_HEADERS) {
    const value = mail[option];
    if (value) pushHeader(lines, key, value);
  }

  const out: string[] = [];
  const bodies: Array<{ encoding: string; body: string }> = [];
  for (const part of parts) {
    const encoded = encodeBody(part.content);
    if (!encoded) return null;
    bodies.push(encoded);
  }
  if (parts.length === 1) {
    const { encoding, body } = bodies[0]!;
    lines.push(
      `Content-Transfer-Encoding: ${encoding}`,
      'MIME-Version: 1.0',
      `Content-Type: ${parts[0]!.type}`,
    );
    out.push(lines.join('\r\n'), '\r\n\r\n', body);
    // build() ends the message with a line break (nodemailer's LastNewline).
    if (!body.endsWith('\n')) out.push(body.endsWith('\r') ? '\n' : '\r\n');
  } else {
    const base = (mail.baseBoundary || randomBoundaryBase()).replace(boundaryControls, '');
    const boundary = `--_NmP-${base}`.replace(boundaryControls, '') + '-Part_1';
    lines.push('MIME-Version: 1.0');
    pushHeader(
      lines,
      'Content-Type',
      buildHeaderValue({ value: 'multipart/alternative', params: { boundary } }),
    );
    out.push(lines.join('\r\n'), '\r\n\r\n');
    parts.forEach(({ type }, i) => {
      const { encoding, body } = bodies[i]!;
      out.push(
        `${i > 0 ? '\r\n' : ''}--${boundary}\r\n`,
        `Content-Type: ${type}\r\nContent-Transfer-Encoding: ${encoding}\r\n\r\n`,
        body,
      );
    });
    out.push(`\r\n--${boundary}--\r\n`);
  }
  return Buffer.from(out.join(''));
}
