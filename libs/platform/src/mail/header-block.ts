/**
 * The header block of a received message, measured in one linear pass before anything parses
 * it, and the limits every parser on the inbound path relies on (docs/architecture.md, security 6), pure:
 *
 * - `headerBlockProblem`: what the MX refuses at the end of DATA (`552 5.3.4`, permanent: the
 *   same message will never pass) and what the processing of a stored message checks again
 *   before parsing (messages stored by an earlier version reach the recovery sweep unchecked):
 *   a header block over MAX_HEADER_BYTES (512 KB) or MAX_HEADER_LINES lines (physical lines,
 *   folded ones included), or address fields (From, To, Cc, ...) over MAX_ADDRESS_FIELD_BYTES
 *   or MAX_ADDRESSES entries together (entries: the fields plus their `,` and `;` separators).
 *   mailparser reads those fields into address objects at 15-50 us an entry (linear, but one
 *   synchronous stretch when the header block is complete, 10 times the cost per byte of any
 *   other field): 512 KB of `g:a@b.c;` blocked the process 1.5-2 s; 2,000 entries cost ~0.1 s.
 *   Likewise the fields it reads as a value with parameters (Content-Type, Content-Disposition,
 *   DKIM-Signature: ~0.5 ms per KB, 5,000 DKIM-Signature fields of 500 KB cost 0.23 s): at most
 *   MAX_PARAMETER_FIELD_BYTES together.
 * - `authenticationProblem`: whether mailauth may read the message (authenticate.ts); beyond
 *   these limits the message is still accepted and posted, its Authentication-Results says
 *   `dkim=permerror`/`dmarc=permerror` with the reason. mailauth 4.x unfolds header lines with a
 *   concat + splice per folded line (quadratic in lines: 68k lines stalled 10 s), parses From
 *   and Return-Path with an addressparser that is quadratic in the field's length, matches each
 *   signature's `h=` list against every header (length x lines), hashes the body once per
 *   distinct `l=`/canonicalization of each signature and asks DNS once per signature. So it gets
 *   at most AUTH_MAX_HEADER_BYTES / AUTH_MAX_HEADER_LINES of header, AUTH_MAX_SIGNATURES
 *   DKIM-Signature fields and AUTH_MAX_ARC_FIELDS ARC fields, and no field it parses
 *   (AUTH_PARSED_FIELDS) longer than AUTH_MAX_FIELD_BYTES.
 * The measured costs and ratios: bench/inbound-hostile (pnpm bench:inbound-hostile).
 */

export const MAX_HEADER_BYTES = 512 * 1024;
export const MAX_HEADER_LINES = 10_000;
export const MAX_ADDRESS_FIELD_BYTES = 64 * 1024;
export const MAX_ADDRESSES = 2_000;
export const MAX_PARAMETER_FIELD_BYTES = 128 * 1024;

export const AUTH_MAX_HEADER_BYTES = 128 * 1024;
export const AUTH_MAX_HEADER_LINES = 1_000;
export const AUTH_MAX_SIGNATURES = 10;
export const AUTH_MAX_ARC_FIELDS = 30;
export const AUTH_MAX_FIELD_BYTES = 4 * 1024;

/** The fields mailparser reads as address lists (mailparser's own list). */
export const ADDRESS_FIELDS: ReadonlySet<string> = new Set([
  'from',
  'to',
  'cc',
  'bcc',
  'sender',
  'reply-to',
  'delivered-to',
  'return-path',
  'disposition-notification-to',
]);

/** The fields mailparser parses as a value with parameters (RFC 2045 / 2231, DKIM tag lists). */
export const PARAMETER_FIELDS: ReadonlySet<string> = new Set([
  'content-type',
  'content-disposition',
  'dkim-signature',
]);

const ARC_FIELDS = new Set(['arc-seal', 'arc-message-signature', 'arc-authentication-results']);
/** The fields mailauth parses beyond splitting the header block into fields. */
export const AUTH_PARSED_FIELDS: ReadonlySet<string> = new Set([
  'from',
  'sender',
  'return-path',
  'content-type',
  'dkim-signature',
  ...ARC_FIELDS,
]);

/** Longest field name kept; longer names are no field anyone reads (counted under ''). */
const MAX_NAME = 128;

export interface FieldStats {
  count: number;
  /** Bytes of the largest one (its lines with their line ends). */
  maxBytes: number;
  totalBytes: number;
}

export interface HeaderStats {
  /** Bytes of the header block (up to the empty line, or all of the message without one). */
  bytes: number;
  /** Physical lines, folded ones included. */
  lines: number;
  /** Per lowercase field name. */
  fields: Map<string, FieldStats>;
  /** The scan stopped early because the block passed MAX_HEADER_BYTES or MAX_HEADER_LINES. */
  truncated: boolean;
  /** Entries of the address fields: one per field plus each `,` and `;` in them. */
  addresses: number;
  /** Where the first Content-Type field is ([start, end) offsets in the scanned buffer). */
  contentType?: [number, number];
}

/**
 * One pass over the header block, reading at most MAX_HEADER_BYTES (+ the empty line) whatever
 * the message's size and stopping one line past MAX_HEADER_LINES. CRLF or bare LF line ends;
 * the block ends at the first empty line.
 */
export function scanHeaderBlock(raw: Buffer): HeaderStats {
  const fields = new Map<string, FieldStats>();
  let lines = 0;
  let addresses = 0;
  let contentType: [number, number] | undefined;
  let current: FieldStats | null = null;
  let currentIsAddress = false;
  let currentIsType = false;
  let currentStart = 0;
  let currentBytes = 0;
  // the block: up to the empty line (native searches), at most MAX_HEADER_BYTES + 3 bytes (room
  // for the empty line right after a block of exactly MAX_HEADER_BYTES)
  const window = raw.subarray(0, Math.min(raw.length, MAX_HEADER_BYTES + 3));
  let end = window.length;
  if (window[0] === 0x0a || (window[0] === 0x0d && window[1] === 0x0a)) end = 0;
  for (const at of [window.indexOf('\n\n'), window.indexOf('\n\r\n')])
    if (at >= 0) end = Math.min(end, at + 1);
  // a plain loop over the bytes, field names sliced from one latin1 string of the block: a
  // Buffer call per line or per name cost ~0.5-2 us each, 7-20 ms for 10k lines
  const head = raw.toString('latin1', 0, end);
  let start = 0; // of the line being read
  let colon = -1; // first `:` of that line
  let separators = 0; // `,` and `;` of that line
  for (let i = 0; i < end; i++) {
    const b = raw[i];
    if (b === 0x2c || b === 0x3b) separators++;
    else if (b === 0x3a && colon < 0) colon = i;
    if (b !== 0x0a && i < end - 1) continue;
    if (++lines > MAX_HEADER_LINES) return done(start, true);
    line(start, i + 1);
    start = i + 1;
    colon = -1;
    separators = 0;
  }
  const over = end > MAX_HEADER_BYTES || (end === window.length && raw.length > window.length);
  return done(over ? Math.max(end, MAX_HEADER_BYTES + 1) : end, over);

  function line(from: number, to: number) {
    const first = raw[from];
    if (first === 0x20 || first === 0x09)
      currentBytes += to - from; // folded: the field above
    else field(from, to);
    if (currentIsAddress) addresses += separators;
  }
  function field(from: number, to: number) {
    close();
    const name = colon > from && colon - from <= MAX_NAME ? head.slice(from, colon).trim().toLowerCase() : '';
    current = fields.get(name) ?? { count: 0, maxBytes: 0, totalBytes: 0 };
    current.count++;
    fields.set(name, current);
    currentStart = from;
    currentBytes = to - from;
    currentIsAddress = ADDRESS_FIELDS.has(name);
    currentIsType = name === 'content-type' && !contentType;
    if (currentIsAddress) addresses++;
  }
  function close() {
    if (!current) return;
    current.maxBytes = Math.max(current.maxBytes, currentBytes);
    current.totalBytes += currentBytes;
    if (currentIsType) contentType = [currentStart, currentStart + currentBytes];
    current = null;
    currentIsType = false;
  }
  function done(bytes: number, truncated: boolean): HeaderStats {
    close();
    return { bytes, lines, fields, truncated, addresses, contentType };
  }
}

/** The `boundary` parameter of the block's first Content-Type field, when it has one. */
export function boundaryOf(raw: Buffer, stats: HeaderStats): string | null {
  if (!stats.contentType) return null;
  const [from, to] = stats.contentType;
  // a field over AUTH_MAX_FIELD_BYTES is read only that far: boundaries are at most 70 characters
  const value = raw
    .toString('latin1', from, Math.min(to, from + AUTH_MAX_FIELD_BYTES))
    .replace(/\r?\n[ \t]/g, ' ');
  const m = /;[ \t]*boundary[ \t]*=[ \t]*(?:"([^"\r\n]{1,200})"|([^\s;"]{1,200}))/i.exec(value);
  return m ? (m[1] ?? m[2]!) : null;
}

const sum = (stats: HeaderStats, names: ReadonlySet<string>, of: (f: FieldStats) => number) => {
  let total = 0;
  for (const name of names) {
    const f = stats.fields.get(name);
    if (f) total += of(f);
  }
  return total;
};

const WORDS = {
  top: {
    header: 'Message header exceeds',
    addresses: 'Message address fields',
    parameters: 'Message Content-Type, Content-Disposition and DKIM-Signature fields',
  },
  parts: {
    header: 'MIME part headers together exceed',
    addresses: 'MIME part address fields together',
    parameters: 'MIME part Content-Type, Content-Disposition and DKIM-Signature fields together',
  },
};

/**
 * Why the MX refuses this header block (the text of its `552 5.3.4`), or null. `parts`: the
 * part headers of a message summed (part-headers.ts), held to the same limits together.
 */
export function headerBlockProblem(stats: HeaderStats, of: 'top' | 'parts' = 'top'): string | null {
  const w = WORDS[of];
  if (stats.bytes > MAX_HEADER_BYTES) return `${w.header} ${MAX_HEADER_BYTES} bytes`;
  if (stats.lines > MAX_HEADER_LINES) return `${w.header} ${MAX_HEADER_LINES} lines`;
  if (sum(stats, ADDRESS_FIELDS, (f) => f.totalBytes) > MAX_ADDRESS_FIELD_BYTES)
    return `${w.addresses} exceed ${MAX_ADDRESS_FIELD_BYTES} bytes`;
  if (stats.addresses > MAX_ADDRESSES) return `${w.addresses} list more than ${MAX_ADDRESSES} addresses`;
  if (sum(stats, PARAMETER_FIELDS, (f) => f.totalBytes) > MAX_PARAMETER_FIELD_BYTES)
    return `${w.parameters} exceed ${MAX_PARAMETER_FIELD_BYTES} bytes`;
  return null;
}

/** Why mailauth is not given this message (authenticate.ts), or null when it may read it. */
export function authenticationProblem(stats: HeaderStats): string | null {
  const problem = headerBlockProblem(stats);
  if (problem) return problem;
  if (stats.bytes > AUTH_MAX_HEADER_BYTES) return `header over ${AUTH_MAX_HEADER_BYTES} bytes`;
  if (stats.lines > AUTH_MAX_HEADER_LINES) return `header over ${AUTH_MAX_HEADER_LINES} lines`;
  if ((stats.fields.get('dkim-signature')?.count ?? 0) > AUTH_MAX_SIGNATURES)
    return `more than ${AUTH_MAX_SIGNATURES} DKIM signatures`;
  if (sum(stats, ARC_FIELDS, (f) => f.count) > AUTH_MAX_ARC_FIELDS)
    return `more than ${AUTH_MAX_ARC_FIELDS} ARC header fields`;
  for (const name of AUTH_PARSED_FIELDS)
    if ((stats.fields.get(name)?.maxBytes ?? 0) > AUTH_MAX_FIELD_BYTES)
      return `${name} field over ${AUTH_MAX_FIELD_BYTES} bytes`;
  return null;
}
