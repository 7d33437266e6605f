/**
 * A Buffer as a stream of slices with a turn of the event loop between them. nodemailer's
 * transforms (DKIM canonicalization and hashing, base64 line wrapping, SMTP dot-stuffing) work
 * on each chunk synchronously: a multi-megabyte message handed over as one chunk held the
 * process (health checks, other copies) for hundreds of milliseconds per step and copy.
 */
import { Readable } from 'node:stream';

export const SLICE_BYTES = 1024 * 1024;

async function* slices(buf: Buffer, size: number): AsyncGenerator<Buffer> {
  for (let i = 0; i < buf.length; i += size) {
    if (i > 0) await new Promise<void>((resolve) => setImmediate(resolve));
    yield buf.subarray(i, i + size);
  }
}

/**
 * `buf` itself when it fits in one slice, else a new readable stream over it (one per use:
 * streams are consumed once).
 */
export function sliced(buf: Buffer, size = SLICE_BYTES): Buffer | Readable {
  if (buf.length <= size) return buf;
  return Readable.from(slices(buf, size), { objectMode: false });
}
