/**
 * The DKIM body hash with the "relaxed" body canonicalization (RFC 6376 3.4.4), with the same
 * reading of line ends as nodemailer's RelaxedBody (whose streams the signer no longer uses, and
 * whose hashes relaxed-body.test.ts compares): LF ends a line and a CR right before it is
 * dropped; a CR not followed by LF is content; runs of SP/HTAB become one SP and vanish at the
 * end of a line; empty lines at the end of the body are ignored; a body that does not end with
 * a line break gets one.
 *
 * A body larger than one slice (slices.ts) is hashed a slice per turn of the event loop, so a
 * multi-megabyte attachment never holds the process.
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
  /** Canonical bytes of the current chunk not hashed yet. */
  private out = Buffer.alloc(0);
  private n = 0;

  /** Canonicalizes and hashes the next bytes of the body. */
  update(chunk: Buffer): this {
    // Every byte at most once, plus a CR for a bare LF and a carried space and CR per chunk.
    this.out = Buffer.allocUnsafe(chunk.length * 2 + 2);
    this.n = 0;
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk[i]!;
      if (c === LF) {
        if (this.lineHasContent) {
          this.out[this.n++] = CR;
          this.out[this.n++] = LF;
          this.lineHasContent = false;
        } else this.pendingEmptyLines++;
        this.pendingWsp = false;
        this.pendingCr = false;
        continue;
      }
      if (this.pendingCr) {
        this.content(CR);
        this.pendingCr = false;
      }
      if (c === CR) this.pendingCr = true;
      else if (c === SP || c === TAB) this.pendingWsp = true;
      else this.content(c);
    }
    this.flush();
    return this;
  }

  /** The base64 body hash (the bh= tag); the instance is done after this. */
  digest(): string {
    if (this.pendingCr) {
      // A CR at the very end of the body is content.
      this.out = Buffer.allocUnsafe(2);
      this.n = 0;
      this.content(CR);
      this.flush();
    }
    if (this.lineHasContent) this.hash.update(CRLF);
    return this.hash.digest('base64');
  }

  private content(c: number): void {
    if (!this.lineHasContent) {
      if (this.pendingEmptyLines > 0) {
        // Empty lines followed by content are part of the body after all.
        this.flush();
        for (; this.pendingEmptyLines > 0; this.pendingEmptyLines--) this.hash.update(CRLF);
      }
      this.lineHasContent = true;
    }
    if (this.pendingWsp) {
      this.out[this.n++] = SP;
      this.pendingWsp = false;
    }
    this.out[this.n++] = c;
  }

  private flush(): void {
    if (this.n > 0) this.hash.update(this.out.subarray(0, this.n));
    this.out = this.out.subarray(this.n);
    this.n = 0;
  }
}

/** The relaxed body hash of `body`, a slice per turn of the event loop when it is large. */
export async function relaxedBodyHash(body: Buffer, sliceBytes = SLICE_BYTES): Promise<string> {
  const h = new RelaxedBody();
  for (let i = 0; i < body.length; i += sliceBytes) {
    if (i > 0) await new Promise<void>((resolve) => setImmediate(resolve));
    h.update(body.subarray(i, i + sliceBytes));
  }
  return h.digest();
}
