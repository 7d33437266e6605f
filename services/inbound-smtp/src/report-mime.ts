/**
 * A small MIME reader for delivery and feedback reports (bounce-detect.ts, arf-detect.ts), pure.
 * mailparser folds `message/delivery-status` into the text body and `message/feedback-report`
 * likewise, so the report parts a detector needs are read here instead: the header block (names
 * lowercased, values unfolded and RFC 2047-decoded), multipart bodies split on their boundary,
 * leaf parts decoded (base64, quoted-printable; text converted from its charset to UTF-8 with
 * the WHATWG TextDecoder).
 * `message/rfc822` parts keep their raw bytes (the returned original). Bounded work: at most
 * MAX_DEPTH nested multiparts and MAX_PARTS leaves; each pass over the bytes is linear.
 */
import libmime from 'libmime';

export const MAX_DEPTH = 6;
export const MAX_PARTS = 64;

export type Headers = Map<string, string[]>;

export interface MimePart {
  /** Lowercase `type/subtype`; `text/plain` when absent. */
  type: string;
  params: Record<string, string>;
  headers: Headers;
  /** The decoded body: text in UTF-8 for text/* and report parts, raw otherwise. */
  body: Buffer;
}

export interface MimeMessage {
  headers: Headers;
  type: string;
  params: Record<string, string>;
  /** Every leaf part in order (a single-part message is its own leaf). */
  parts: MimePart[];
}

/** The index where the body starts and where the header block ends. */
function splitHead(raw: Buffer): { head: string; body: Buffer } {
  const crlf = raw.indexOf('\r\n\r\n');
  const lf = raw.indexOf('\n\n');
  if (crlf < 0 && lf < 0) return { head: raw.toString('latin1'), body: Buffer.alloc(0) };
  const useCrlf = crlf >= 0 && (lf < 0 || crlf <= lf);
  const end = useCrlf ? crlf : lf;
  return { head: raw.subarray(0, end).toString('latin1'), body: raw.subarray(end + (useCrlf ? 4 : 2)) };
}

/** Parses a header block (also the field blocks of delivery-status and feedback-report bodies). */
export function parseFields(block: string, decodeWords = true): Headers {
  const out: Headers = new Map();
  let name = '';
  let value = '';
  const flush = () => {
    if (!name) return;
    const v = value.trim();
    let decoded = v;
    if (decodeWords && v.includes('=?')) {
      try {
        decoded = libmime.decodeWords(v);
      } catch {
        decoded = v;
      }
    }
    const values = out.get(name);
    // appended in place: copying the list for every repeated name was quadratic in their number
    if (values) values.push(decoded);
    else out.set(name, [decoded]);
  };
  for (const line of block.split(/\r?\n/)) {
    if (/^[ \t]/.test(line)) {
      if (name) value += ` ${line.trim()}`;
      continue;
    }
    const colon = line.indexOf(':');
    flush();
    if (colon <= 0) {
      name = '';
      continue;
    }
    name = line.slice(0, colon).trim().toLowerCase();
    value = line.slice(colon + 1);
  }
  flush();
  return out;
}

/** First value of a header ('' when absent). */
export function first(headers: Headers, name: string): string {
  return headers.get(name)?.[0] ?? '';
}

function contentType(headers: Headers): { type: string; params: Record<string, string> } {
  const v = first(headers, 'content-type');
  if (!v) return { type: 'text/plain', params: {} };
  const parsed = libmime.parseHeaderValue(v) as { value: string; params: Record<string, string> };
  return { type: (parsed.value || 'text/plain').toLowerCase().trim(), params: parsed.params ?? {} };
}

function decodeQuotedPrintable(body: Buffer): Buffer {
  const s = body.toString('latin1').replace(/=\r?\n/g, '');
  const out = Buffer.alloc(s.length);
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 61 /* = */ && /^[0-9A-Fa-f]{2}$/.test(s.slice(i + 1, i + 3))) {
      out[n++] = Number.parseInt(s.slice(i + 1, i + 3), 16);
      i += 2;
    } else out[n++] = c & 0xff;
  }
  return out.subarray(0, n);
}

function decodeTransfer(headers: Headers, body: Buffer): Buffer {
  const cte = first(headers, 'content-transfer-encoding').toLowerCase().trim();
  if (cte === 'base64') return Buffer.from(body.toString('latin1').replace(/[^A-Za-z0-9+/=]/g, ''), 'base64');
  if (cte === 'quoted-printable') return decodeQuotedPrintable(body);
  return body;
}

const isTextual = (type: string) =>
  type.startsWith('text/') ||
  type === 'message/delivery-status' ||
  type === 'message/global-delivery-status' ||
  type === 'message/feedback-report' ||
  type === 'message/global-headers';

function toUtf8(body: Buffer, charset: string | undefined): Buffer {
  const cs = (charset ?? '').toLowerCase().trim();
  if (!cs || cs === 'utf-8' || cs === 'utf8' || cs === 'us-ascii') return body;
  try {
    return Buffer.from(new TextDecoder(cs).decode(body), 'utf8');
  } catch {
    return body; // a charset Node does not know: the bytes as they are
  }
}

/** Splits a multipart body on `--boundary` lines; the preamble and epilogue are dropped. */
function splitMultipart(body: Buffer, boundary: string): Buffer[] {
  const text = body.toString('latin1');
  const delimiter = `--${boundary}`;
  const parts: Buffer[] = [];
  let start = -1;
  let pos = 0;
  while (pos <= text.length) {
    const nl = text.indexOf('\n', pos);
    const lineEnd = nl < 0 ? text.length : nl;
    const line = text.slice(pos, lineEnd).replace(/\r$/, '');
    if (line.startsWith(delimiter)) {
      const rest = line.slice(delimiter.length).trim();
      if (start >= 0) {
        let end = pos;
        if (text[end - 1] === '\n') end--;
        if (text[end - 1] === '\r') end--;
        parts.push(body.subarray(start, Math.max(start, end)));
      }
      if (rest === '--') return parts;
      start = nl < 0 ? text.length : nl + 1;
    }
    if (nl < 0) break;
    pos = nl + 1;
  }
  if (start >= 0 && start < text.length) parts.push(body.subarray(start));
  return parts;
}

/** Reads `raw` into its headers and leaf parts (see the module comment for the bounds). */
export function readMime(raw: Buffer): MimeMessage {
  const { head, body } = splitHead(raw);
  const headers = parseFields(head);
  const ct = contentType(headers);
  const parts: MimePart[] = [];
  walk(headers, ct, body, 0, parts);
  return { headers, type: ct.type, params: ct.params, parts };
}

function walk(
  headers: Headers,
  ct: { type: string; params: Record<string, string> },
  body: Buffer,
  depth: number,
  out: MimePart[],
): void {
  if (out.length >= MAX_PARTS) return;
  const boundary = ct.params.boundary;
  if (ct.type.startsWith('multipart/') && boundary && depth < MAX_DEPTH) {
    for (const chunk of splitMultipart(body, boundary)) {
      const { head, body: partBody } = splitHead(chunk);
      const h = parseFields(head);
      walk(h, contentType(h), partBody, depth + 1, out);
      if (out.length >= MAX_PARTS) return;
    }
    return;
  }
  const decoded = decodeTransfer(headers, body);
  out.push({
    type: ct.type,
    params: ct.params,
    headers,
    body: isTextual(ct.type) ? toUtf8(decoded, ct.params.charset) : decoded,
  });
}

/** The headers of an embedded message (message/rfc822 or text/rfc822-headers body). */
export function embeddedHeaders(part: MimePart): Headers {
  return parseFields(splitHead(part.body).head);
}
