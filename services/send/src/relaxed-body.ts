/**
 * The DKIM body hash with the "relaxed" body canonicalization (RFC 6376 3.4.4), with the same
 * reading of line ends as nodemailer's RelaxedBody (whose streams the signer no longer uses, and
 * whose hashes relaxed-body.test.ts compares): LF ends a line and a CR right before it is
 * dropped; a CR not followed by LF is content; runs of SP/HTAB become one SP and vanish at the
 * end of a line; empty lines at the end of the body are ignored; a body that does not end with
 * a line break gets one.
 *
 * A body larger than one slice (slices.ts) is hashed a slice per turn of the event loop, so a
 * multi-megabyte attachment never holds the process. A body whose canonical form is only a
 * matter of line ends (what the MIME builder writes: single spaces, nothing trailing; found with
 * native searches) is hashed without the byte loop.
 */
import { createHash } from 'node:crypto';
import { SLICE_BYTES } from './slices';

const CR = 0x0d;
const LF = 0x0a;
const SP = 0x20;
const TAB = 0x09;
const CRLF = Buffer.from('\r\n');

export class RelaxedBody {
  private readonly hash = createHash('sha256');
  private lineHasContent = false;
  private pendingWsp = false;
  private pendingCr = false;
  private pendingEmptyLines = 0;

  /** Canonicalizes and hashes the next bytes of the body (state in locals: this is the hot loop). */
  update(chunk: Buffer): this {
    // Every byte at most once, plus a CR for a bare LF and a carried space and CR per chunk.
    const out = Buffer.allocUnsafe(chunk.length * 2 + 2);
    let n = 0;
    let lineHasContent = this.lineHasContent;
    let pendingWsp = this.pendingWsp;
    let pendingCr = this.pendingCr;
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk[i]!;
      if (c === LF) {
        // End of line: a CR right before it and trailing whitespace are dropped.
        if (lineHasContent) {
          out[n++] = CR;
          out[n++] = LF;
          lineHasContent = false;
        } else this.pendingEmptyLines++;
        pendingWsp = false;
        pendingCr = false;
        continue;
      }
      if (pendingCr || (c !== CR && c !== SP && c !== TAB)) {
        // Content: the byte, after a CR that turned out not to end the line.
        if (!lineHasContent) {
          if (this.pendingEmptyLines > 0) {
            this.hash.update(out.subarray(0, n));
            n = 0;
            this.hashEmptyLines();
          }
          lineHasContent = true;
        }
        if (pendingWsp) {
          out[n++] = SP;
          pendingWsp = false;
        }
        if (pendingCr) {
          out[n++] = CR;
          pendingCr = false;
          if (c === CR || c === SP || c === TAB) {
            // This byte is not content itself: look at it again as such.
            i--;
            continue;
          }
        }
        out[n++] = c;
        continue;
      }
      if (c === CR) pendingCr = true;
      else pendingWsp = true;
    }
    this.hash.update(out.subarray(0, n));
    this.lineHasContent = lineHasContent;
    this.pendingWsp = pendingWsp;
    this.pendingCr = pendingCr;
    return this;
  }

  /** The base64 body hash (the bh= tag); the instance is done after this. */
  digest(): string {
    if (this.pendingCr) {
      // A CR at the very end of the body is content.
      if (!this.lineHasContent) this.hashEmptyLines();
      this.hash.update(this.pendingWsp ? ' \r' : '\r');
      this.lineHasContent = true;
    }
    if (this.lineHasContent) this.hash.update(CRLF);
    return this.hash.digest('base64');
  }

  private hashEmptyLines(): void {
    for (; this.pendingEmptyLines > 0; this.pendingEmptyLines--) this.hash.update(CRLF);
  }
}

/**
 * The canonical body when relaxed canonicalization only has to turn bare LFs into CRLF and drop
 * the trailing empty lines: no TAB, no run of spaces, no space at the end of a line or of the
 * body, no CR that is not followed by LF. Else null (the byte loop decides).
 */
export function canonicalBody(body: Buffer): Buffer | null {
  if (body.includes(0x09) || body.includes('  ') || body.includes(' \r') || body.includes(' \n')) return null;
  if (body.length > 0 && body[body.length - 1] === SP) return null;
  for (let at = body.indexOf(CR); at !== -1; at = body.indexOf(CR, at + 2))
    if (body[at + 1] !== LF) return null;
  let lines = body;
  if (body.includes(LF)) {
    const text = body.toString('latin1');
    if (/(?:^|[^\r])\n/.test(text)) lines = Buffer.from(text.replace(/\r?\n/g, '\r\n'), 'latin1');
  }
  let end = lines.length;
  while (end >= 2 && lines[end - 1] === LF && lines[end - 2] === CR && (end === 2 || lines[end - 3] === LF))
    end -= 2;
  return lines.subarray(0, end);
}

/** The relaxed body hash of `body`, a slice per turn of the event loop when it is large. */
export async function relaxedBodyHash(body: Buffer, sliceBytes = SLICE_BYTES): Promise<string> {
  const canonical = body.length <= sliceBytes ? canonicalBody(body) : null;
  if (canonical) {
    const hash = createHash('sha256').update(canonical);
    // A body that does not end with a line break gets one (an empty one stays empty).
    if (canonical.length > 0 && canonical[canonical.length - 1] !== LF) hash.update(CRLF);
    return hash.digest('base64');
  }
  const h = new RelaxedBody();
  for (let i = 0; i < body.length; i += sliceBytes) {
    if (i > 0) await new Promise<void>((resolve) => setImmediate(resolve));
    h.update(body.subarray(i, i + sliceBytes));
  }
  return h.digest();
}
