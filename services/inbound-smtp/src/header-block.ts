/**
 * The header block of a received message, measured in one linear pass before anything parses
 * it, and the limits every parser on the inbound path relies on (DESIGN.md Security 6), pure:
 *
 * - `headerBlockProblem`: what the MX refuses at the end of DATA (`552 5.3.4`, permanent: the
 *   same message will never pass) and what the processing of a stored message checks again
 *   before parsing (messages stored by an earlier version reach the recovery sweep unchecked):
 *   a header block over MAX_HEADER_BYTES (512 KB) or MAX_HEADER_LINES lines (physical lines,
 *   folded ones included), or address fields (From, To, Cc, ...) over MAX_ADDRESS_FIELD_BYTES
 *   together. mailparser reads those fields into address objects at about 3 ms per KB (linear,
 *   one synchronous stretch when the header block is complete): 512 KB of `g:a@b.c;` blocked the
 *   process 1.5 s; the cap bounds that to about what an honest 25 MB message costs.
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
export const MAX_ADDRESS_FIELD_BYTES = 128 * 1024;

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
}

/**
 * One pass over the header block, stopping as soon as it is known to be over MAX_HEADER_BYTES
 * or MAX_HEADER_LINES (at most that much is read, whatever the message's size). CRLF or bare
 * LF line ends; the block ends at the first empty line.
 */
export function scanHeaderBlock(raw: Buffer): HeaderStats {
  const fields = new Map<string, FieldStats>();
  let lines = 0;
  let pos = 0;
  let current: FieldStats | null = null;
  let currentBytes = 0;
  const close = () => {
    if (!current) return;
    current.maxBytes = Math.max(current.maxBytes, currentBytes);
    current.totalBytes += currentBytes;
  };
  while (pos < raw.length) {
    if (pos > MAX_HEADER_BYTES || lines > MAX_HEADER_LINES) {
      close();
      return { bytes: pos, lines, fields, truncated: true };
    }
    const nl = raw.indexOf(0x0a, pos);
    const next = nl < 0 ? raw.length : nl + 1;
    const first = raw[pos];
    if (first === 0x0a || (first === 0x0d && raw[pos + 1] === 0x0a)) break; // the empty line
    lines++;
    if (first === 0x20 || first === 0x09) {
      currentBytes += next - pos; // a folded line belongs to the field above it
    } else {
      close();
      const colon = raw.indexOf(0x3a, pos);
      const name =
        colon > pos && colon < next && colon - pos <= MAX_NAME
          ? raw.toString('latin1', pos, colon).trim().toLowerCase()
          : '';
      current = fields.get(name) ?? { count: 0, maxBytes: 0, totalBytes: 0 };
      current.count++;
      fields.set(name, current);
      currentBytes = next - pos;
    }
    pos = next;
  }
  close();
  const truncated = pos > MAX_HEADER_BYTES || lines > MAX_HEADER_LINES;
  return { bytes: pos, lines, fields, truncated };
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
