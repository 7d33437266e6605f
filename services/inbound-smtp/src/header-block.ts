/**
 * The header block of a received message, measured in one linear pass before anything parses
 * it, and the limits every parser on the inbound path relies on (DESIGN.md Security 6), pure:
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
}

/**
 * One pass over the header block, stopping as soon as it is known to be over MAX_HEADER_BYTES
 * or MAX_HEADER_LINES (at most that much is read, whatever the message's size). CRLF or bare
 * LF line ends; the block ends at the first empty line.
 */
export function scanHeaderBlock(raw: Buffer): HeaderStats {
  const fields = new Map<string, FieldStats>();
  let lines = 0;
  let addresses = 0;
  let current: FieldStats | null = null;
  let currentIsAddress = false;
  let currentBytes = 0;
  let start = 0; // of the line being read
  let colon = -1; // first `:` of that line
  let separators = 0; // `,` and `;` of that line
  // room for the empty line right after a block of exactly MAX_HEADER_BYTES
  const limit = Math.min(raw.length, MAX_HEADER_BYTES + 3);
  // a plain loop over the bytes, field names sliced from one latin1 string: a Buffer call per
  // line or per name cost ~0.5-2 us each, 7-20 ms for 10k lines
  const head = raw.toString('latin1', 0, limit);
  for (let i = 0; i < limit; i++) {
    const b = raw[i];
    if (b === 0x2c || b === 0x3b) separators++;
    else if (b === 0x3a && colon < 0) colon = i;
    if (b !== 0x0a) continue;
    const next = i + 1;
    const first = raw[start];
    if (next - start <= 2 && (first === 0x0a || first === 0x0d)) return done(start, false); // the empty line
    if (++lines > MAX_HEADER_LINES) return done(start, true);
    line(start, next);
    start = next;
    colon = -1;
    separators = 0;
  }
  if (start < raw.length && limit === raw.length) {
    // the last line has no line end (a message of headers only)
    lines++;
    line(start, raw.length);
    return done(raw.length, lines > MAX_HEADER_LINES);
  }
  return done(limit, limit > MAX_HEADER_BYTES);

  function line(from: number, to: number) {
    const first = raw[from];
    if (first === 0x20 || first === 0x09)
      currentBytes += to - from; // folded: the field above
    else field(from, to);
    if (currentIsAddress) addresses += separators;
  }
  function field(from: number, to: number) {
    close();
    const name =
      colon > from && colon - from <= MAX_NAME
        ? raw.toString('latin1', from, colon).trim().toLowerCase()
        : '';
    current = fields.get(name) ?? { count: 0, maxBytes: 0, totalBytes: 0 };
    current.count++;
    fields.set(name, current);
    currentBytes = to - from;
    currentIsAddress = ADDRESS_FIELDS.has(name);
    if (currentIsAddress) addresses++;
  }
  function close() {
    if (!current) return;
    current.maxBytes = Math.max(current.maxBytes, currentBytes);
    current.totalBytes += currentBytes;
    current = null;
  }
  function done(bytes: number, truncated: boolean): HeaderStats {
    close();
    return { bytes, lines, fields, truncated, addresses };
  }
}

const sum = (stats: HeaderStats, names: ReadonlySet<string>, of: (f: FieldStats) => number) => {
  let total = 0;
  for (const name of names) {
    const f = stats.fields.get(name);
    if (f) total += of(f);
  }
  return total;
};

/** Why the MX refuses this header block (the text of its `552 5.3.4`), or null. */
export function headerBlockProblem(stats: HeaderStats): string | null {
  if (stats.bytes > MAX_HEADER_BYTES) return `Message header exceeds ${MAX_HEADER_BYTES} bytes`;
  if (stats.lines > MAX_HEADER_LINES) return `Message header exceeds ${MAX_HEADER_LINES} lines`;
  if (sum(stats, ADDRESS_FIELDS, (f) => f.totalBytes) > MAX_ADDRESS_FIELD_BYTES)
    return `Message address fields exceed ${MAX_ADDRESS_FIELD_BYTES} bytes`;
  if (stats.addresses > MAX_ADDRESSES)
    return `Message address fields list more than ${MAX_ADDRESSES} addresses`;
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
