/**
 * The body structure of a message, laid out by nodemailer MailComposer's rules so our messages
 * keep their shape:
 *
 * - the alternatives are the text part then the HTML part (each only when non-empty);
 * - with an HTML part, attachments with a content id are `related` (multipart/related with the
 *   HTML part first), the others `attached`; without one, every attachment is attached;
 * - multipart/mixed when more than one attachment is attached, or one is and there is a body;
 *   inside it (or at the top without it) multipart/alternative when there are two alternatives,
 *   else multipart/related when there are related parts, else the one part as it is; the
 *   attached parts follow;
 * - a message with no body and no attachment is one empty text/plain part.
 *
 * Boundaries are `--_NmP-<base>-Part_<n>`, `<n>` the part's number in document order (the root
 * is 1), `<base>` 16 random hex digits per message.
 */
import { randomBytes } from 'node:crypto';
import { buildHeaderValue } from 'nodemailer/lib/mime-funcs';
import type { AttachmentPart } from './attachments';
import { type EncodedBody, encodeTextBody } from './encoding';
import { pushHeader } from './headers';

export type Part =
  | { kind: 'text'; contentType: string; content: string }
  | { kind: 'raw'; raw: Buffer }
  | { kind: 'multipart'; contentType: 'mixed' | 'alternative' | 'related'; children: Part[] };

const TEXT_TYPE = 'text/plain; charset=utf-8';
const HTML_TYPE = 'text/html; charset=utf-8';

export interface BodyInput {
  text?: string | undefined;
  html?: string | undefined;
  attachments: readonly AttachmentPart[];
}

const rawPart = (a: AttachmentPart): Part => ({ kind: 'raw', raw: a.raw });

/** The part tree of a message (see the file comment). */
export function layoutBody({ text, html, attachments }: BodyInput): Part {
  const alternatives: Part[] = [];
  if (text) alternatives.push({ kind: 'text', contentType: TEXT_TYPE, content: text });
  const htmlPart: Part | undefined = html
    ? { kind: 'text', contentType: HTML_TYPE, content: html }
    : undefined;
  if (htmlPart) alternatives.push(htmlPart);
  const related = htmlPart ? attachments.filter((a) => a.cid).map(rawPart) : [];
  const attached = (htmlPart ? attachments.filter((a) => !a.cid) : attachments).map(rawPart);

  let main: Part | undefined = alternatives.length === 1 ? alternatives[0] : undefined;
  const relatedPart: Part | undefined = related.length
    ? { kind: 'multipart', contentType: 'related', children: [htmlPart!, ...related] }
    : undefined;
  if (alternatives.length > 1) {
    const children = relatedPart ? alternatives.map((p) => (p === htmlPart ? relatedPart : p)) : alternatives;
    main = { kind: 'multipart', contentType: 'alternative', children };
  } else if (relatedPart) main = relatedPart;

  if (attached.length > 1 || (alternatives.length > 0 && attached.length === 1))
    return { kind: 'multipart', contentType: 'mixed', children: main ? [main, ...attached] : attached };
  return main ?? attached[0] ?? { kind: 'text', contentType: 'text/plain', content: '' };
}

/**
 * Boundary bases: 8 random bytes per message, taken from a pool filled 512 messages at a time
 * (a synchronous randomBytes call per message was a seventh of the build).
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

// biome-ignore lint/suspicious/noControlCharactersInRegex: the characters a boundary cannot hold
const boundaryControls = /[\x00-\x1f\x7f]+/g;

/** The message body: string, Buffer and pending pieces in order. */
export type Pieces = Array<string | Buffer | Promise<string>>;

/** The header lines of a part's own Content-Type (and Content-Transfer-Encoding). */
export function partHeaders(
  part: Part,
  boundary: string | undefined,
  encoded: EncodedBody | undefined,
): string[] {
  const lines: string[] = [];
  if (part.kind === 'multipart') {
    const params: Record<string, string> = part.contentType === 'related' ? { type: 'text/html' } : {};
    params.boundary = boundary!;
    const value = buildHeaderValue({ value: `multipart/${part.contentType}`, params });
    pushHeader(lines, 'Content-Type', value);
  } else if (part.kind === 'text') {
    lines.push(`Content-Type: ${part.contentType}`);
    if (encoded) lines.push(`Content-Transfer-Encoding: ${encoded.encoding}`);
  }
  return lines;
}

/** Numbers the parts in document order from 1 and gives each multipart its boundary. */
export function boundaries(root: Part, base?: string): Map<Part, string> {
  const out = new Map<Part, string>();
  if (root.kind !== 'multipart') return out;
  const prefix = `--_NmP-${base || randomBoundaryBase()}`.replace(boundaryControls, '');
  let n = 0;
  const visit = (part: Part) => {
    n++;
    if (part.kind !== 'multipart') return;
    out.set(part, `${prefix}-Part_${n}`);
    for (const child of part.children) visit(child);
  };
  visit(root);
  return out;
}

/** A text part's encoded body, or undefined for an empty one (written with no encoding header). */
export const encodePart = (part: Part): EncodedBody | undefined =>
  part.kind === 'text' && part.content ? encodeTextBody(part.content) : undefined;

/** Appends what follows a part's header block: its body, or its children between boundaries. */
export function writeBody(
  part: Part,
  encoded: EncodedBody | undefined,
  bounds: Map<Part, string>,
  out: Pieces,
): void {
  if (part.kind === 'text') {
    if (encoded) out.push(encoded.body);
    return;
  }
  if (part.kind === 'raw') return;
  const boundary = bounds.get(part)!;
  part.children.forEach((child, i) => {
    out.push(`${i > 0 ? '\r\n' : ''}--${boundary}\r\n`);
    writePart(child, bounds, out);
  });
  out.push(`\r\n--${boundary}--\r\n`);
}

/** A child part as a whole: a pre-built part as it is, else its headers, a blank line and its body. */
function writePart(part: Part, bounds: Map<Part, string>, out: Pieces): void {
  if (part.kind === 'raw') {
    out.push(part.raw);
    return;
  }
  const encoded = encodePart(part);
  out.push(`${partHeaders(part, bounds.get(part), encoded).join('\r\n')}\r\n\r\n`);
  writeBody(part, encoded, bounds, out);
}
