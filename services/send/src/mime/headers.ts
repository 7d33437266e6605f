/**
 * Header lines as nodemailer writes them: the line `Key: value` folded at 76 by `foldLines`, a
 * header whose encoded value is blank left out, names with header-key.ts's casing. Values:
 *
 * - unstructured text (Subject, custom headers): line breaks become spaces; RFC 2047 encoded
 *   words when it is not plain ASCII (all of it in one run of words when it holds a control
 *   character), Q or B as encoding.ts prefers for the text;
 * - Message-ID, In-Reply-To: one msg-id, line breaks as spaces, controls dropped, in angle brackets;
 * - Date: `Sun, 01 Mar 2026 10:00:00 +0000`;
 * - Content-Type, Content-Disposition: as built (mime-funcs' buildHeaderValue), on one line;
 * - the address headers, References and the other structured ones (OTP-Token, Content-ID): by
 *   nodemailer MimeNode's public `encodeHeaderValue` (addresses punycoded, names encoded).
 *
 * Why not `encodeHeaderValue` for all: it normalises the name with a chain of regular
 * expressions on every call; the common headers are encoded here with nodemailer's public word
 * encoders, and message.test.ts holds the result equal to MailComposer's.
 */
import { encodeWord, encodeWords, foldLines } from 'nodemailer/lib/mime-funcs';
import MimeNode from 'nodemailer/lib/mime-node';
import { preferredTextEncoding } from './encoding';
import { normalizeHeaderKey } from './header-key';

/** One node used only for its header encoding (no per-node state is read: no text encoding is set). */
const encoder = new MimeNode();

/** Names whose values nodemailer formats as structured fields. */
const STRUCTURED = new Set([
  'From',
  'Sender',
  'To',
  'Cc',
  'Bcc',
  'Reply-To',
  'References',
  'OTP-Token',
  'Content-ID',
]);

const lineBreaks = /\r?\n|\r/g;
// biome-ignore lint/suspicious/noControlCharactersInRegex: the characters a header cannot hold
const controls = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/;

/** Unstructured text as an RFC 2047 header value. */
function encodeText(text: string): string {
  const value = text.replace(lineBreaks, ' ');
  const encoding = preferredTextEncoding(value);
  return controls.test(value) ? encodeWord(value, encoding, 52) : encodeWords(value, encoding, 52, true);
}

/** One msg-id in angle brackets. */
function encodeMessageId(id: string): string {
  let value = id.replace(lineBreaks, ' ').replace(new RegExp(controls.source, 'g'), '');
  if (value.charAt(0) !== '<') value = `<${value}`;
  if (value.charAt(value.length - 1) !== '>') value = `${value}>`;
  return value;
}

function encodeValue(key: string, value: unknown): string {
  if (!STRUCTURED.has(key)) {
    if (key === 'Date' && value instanceof Date) return value.toUTCString().replace(/GMT/, '+0000');
    if (typeof value === 'string') {
      if (key === 'Message-ID' || key === 'In-Reply-To') return encodeMessageId(value);
      // Already encoded by whoever built them (mime-funcs' buildHeaderValue).
      if (key === 'Content-Type' || key === 'Content-Disposition') return value.replace(lineBreaks, ' ');
      return encodeText(value);
    }
  }
  return encoder.encodeHeaderValue(key, value as string);
}

/** Appends the folded `Key: value` line to `lines`, unless the encoded value is blank. */
export function pushHeader(lines: string[], name: string, value: unknown): void {
  const key = normalizeHeaderKey(name);
  const encoded = encodeValue(key, value);
  if (!encoded.trim()) return;
  lines.push(foldLines(`${key}: ${encoded}`, 76));
}
