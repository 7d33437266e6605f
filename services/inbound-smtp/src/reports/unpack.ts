/**
 * Unpacks one report attachment (docs/deliverability.md "Limits"): gzip (zlib), zip (yauzl) or
 * the document itself (XML, JSON), recognised by its first bytes, never by the name or type a
 * sender claims. Every output is bounded before it is held: zlib stops inflating at the cap
 * (`maxOutputLength`), a zip entry is refused on its declared size before it is read and its
 * stream is cut as soon as the bytes read pass the cap or the declared size (yauzl checks that
 * the actual size is the declared one), so a gzip or zip bomb costs at most the cap. Refused:
 * more than MAX_ZIP_ENTRIES entries, encrypted entries, compression other than stored/deflate,
 * an archive inside an archive (by name or by content), an output more than MAX_RATIO times
 * its compressed size (past RATIO_FLOOR bytes), anything larger than the caps below.
 * Never throws: a refusal is `{ ok: false, reason }`.
 */
import { gunzipSync } from 'node:zlib';
import yauzl from 'yauzl';

/** The largest attachment read: the MX's default message cap (INBOUND_MAX_MESSAGE_BYTES). */
export const MAX_ATTACHMENT_BYTES = 25 * 1024 * 1024;
/** The largest uncompressed report (one document). */
export const MAX_REPORT_BYTES = 20 * 1024 * 1024;
/** Entries of one zip (directories included). */
export const MAX_ZIP_ENTRIES = 10;
/** Uncompressed bytes of all the documents of one zip. */
export const MAX_ARCHIVE_BYTES = 40 * 1024 * 1024;
/** Most uncompressed bytes per compressed byte (real reports compress 10-50x), past RATIO_FLOOR. */
export const MAX_RATIO = 200;
export const RATIO_FLOOR = 1024 * 1024;

export interface ReportDocument {
  /** The zip entry's name, else the attachment's ('' when unnamed). */
  name: string;
  bytes: Buffer;
}

export type Unpacked = { ok: true; documents: ReportDocument[] } | { ok: false; reason: string };

const MB = (n: number) => `${Math.round(n / (1024 * 1024))} MB`;
const refuse = (reason: string): Unpacked => ({ ok: false, reason });

export const isGzip = (b: Buffer) => b.length >= 2 && b[0] === 0x1f && b[1] === 0x8b;
export const isZip = (b: Buffer) =>
  b.length >= 4 && b[0] === 0x50 && b[1] === 0x4b && (b[2] === 3 || b[2] === 5) && (b[3] === 4 || b[3] === 6);
const ARCHIVE_NAME = /\.(zip|gz|gzip|tgz|tar|bz2|xz|7z|rar|zst)$/i;

/** The most one compressed input of `compressed` bytes may inflate to. */
export function inflateCap(compressed: number, cap = MAX_REPORT_BYTES): number {
  return Math.min(cap, Math.max(RATIO_FLOOR, compressed * MAX_RATIO));
}

/** Unpacks `bytes` (an attachment named `name`) into its report documents. */
export async function unpack(bytes: Buffer, name = ''): Promise<Unpacked> {
  if (bytes.length > MAX_ATTACHMENT_BYTES) return refuse(`attachment over ${MB(MAX_ATTACHMENT_BYTES)}`);
  if (bytes.length === 0) return refuse('empty attachment');
  if (isGzip(bytes)) return gunzip(bytes, name);
  if (isZip(bytes)) return unzip(bytes);
  if (bytes.length > MAX_REPORT_BYTES) return refuse(`report over ${MB(MAX_REPORT_BYTES)}`);
  return { ok: true, documents: [{ name, bytes }] };
}

function gunzip(bytes: Buffer, name: string): Unpacked {
  const cap = inflateCap(bytes.length);
  let out: Buffer;
  try {
    out = gunzipSync(bytes, { maxOutputLength: cap });
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'ERR_BUFFER_TOO_LARGE' || e instanceof RangeError)
      return refuse(overCap(cap, bytes.length));
    return refuse(`gzip: ${e.message}`);
  }
  if (isGzip(out) || isZip(out)) return refuse('nested archive in gzip');
  return { ok: true, documents: [{ name: name.replace(/\.gz(ip)?$/i, ''), bytes: out }] };
}

function overCap(cap: number, compressed: number): string {
  return cap < MAX_REPORT_BYTES
    ? `uncompressed size over ${MAX_RATIO} times the compressed ${compressed} bytes (compression bomb)`
    : `uncompressed report over ${MB(MAX_REPORT_BYTES)}`;
}

function unzip(bytes: Buffer): Promise<Unpacked> {
  return new Promise((resolve) => {
    yauzl.fromBuffer(
      bytes,
      { lazyEntries: true, validateEntrySizes: true, strictFileNames: false, decodeStrings: true },
      (err, zip) => {
        if (err || !zip) return resolve(refuse(`zip: ${err?.message ?? 'unreadable'}`));
        readEntries(zip).then(resolve, (e: Error) => resolve(refuse(`zip: ${e.message}`)));
      },
    );
  });
}

async function readEntries(zip: yauzl.ZipFile): Promise<Unpacked> {
  try {
    if (zip.entryCount > MAX_ZIP_ENTRIES)
      return refuse(`zip with ${zip.entryCount} entries (at most ${MAX_ZIP_ENTRIES})`);
    const documents: ReportDocument[] = [];
    let total = 0;
    for (let entry = await nextEntry(zip); entry; entry = await nextEntry(zip)) {
      if (entry.fileName.endsWith('/')) continue;
      const bad = entryProblem(entry, total);
      if (bad) return refuse(bad);
      const cap = Math.min(inflateCap(entry.compressedSize), MAX_ARCHIVE_BYTES - total);
      const read = await readEntry(zip, entry, cap);
      if (!read.ok) return refuse(read.reason);
      if (isGzip(read.bytes) || isZip(read.bytes)) return refuse(`nested archive in zip (${entry.fileName})`);
      total += read.bytes.length;
      documents.push({ name: entry.fileName, bytes: read.bytes });
    }
    return { ok: true, documents };
  } finally {
    zip.close();
  }
}

/** What refuses an entry before any of it is read (its central directory record). */
function entryProblem(entry: yauzl.Entry, total: number): string | null {
  const name = entry.fileName;
  if (entry.isEncrypted()) return `encrypted zip entry (${name})`;
  if (ARCHIVE_NAME.test(name)) return `nested archive in zip (${name})`;
  if (entry.compressionMethod !== 0 && entry.compressionMethod !== 8)
    return `zip entry ${name}: compression method ${entry.compressionMethod} not supported`;
  if (entry.uncompressedSize > MAX_REPORT_BYTES)
    return `zip entry ${name} declares ${entry.uncompressedSize} bytes (over ${MB(MAX_REPORT_BYTES)})`;
  if (entry.uncompressedSize > inflateCap(entry.compressedSize))
    return `zip entry ${name} declares over ${MAX_RATIO} times its compressed size (compression bomb)`;
  if (total + entry.uncompressedSize > MAX_ARCHIVE_BYTES)
    return `zip entries over ${MB(MAX_ARCHIVE_BYTES)} in all`;
  return null;
}

function nextEntry(zip: yauzl.ZipFile): Promise<yauzl.Entry | null> {
  return new Promise((resolve, reject) => {
    const cleanup = () => {
      zip.off('entry', onEntry);
      zip.off('end', onEnd);
      zip.off('error', onError);
    };
    const onEntry = (e: yauzl.Entry) => {
      cleanup();
      resolve(e);
    };
    const onEnd = () => {
      cleanup();
      resolve(null);
    };
    const onError = (e: Error) => {
      cleanup();
      reject(e);
    };
    zip.on('entry', onEntry);
    zip.on('end', onEnd);
    zip.on('error', onError);
    zip.readEntry();
  });
}

/** The entry's bytes, cut at `cap` (and by yauzl at the declared size: an entry that lies fails). */
function readEntry(
  zip: yauzl.ZipFile,
  entry: yauzl.Entry,
  cap: number,
): Promise<{ ok: true; bytes: Buffer } | { ok: false; reason: string }> {
  return new Promise((resolve) => {
    zip.openReadStream(entry, (err, stream) => {
      if (err || !stream)
        return resolve({ ok: false, reason: `zip entry ${entry.fileName}: ${err?.message}` });
      const chunks: Buffer[] = [];
      let n = 0;
      let done = false;
      const finish = (r: { ok: true; bytes: Buffer } | { ok: false; reason: string }) => {
        if (done) return;
        done = true;
        resolve(r);
      };
      stream.on('data', (chunk: Buffer) => {
        n += chunk.length;
        if (n > cap) {
          stream.destroy();
          finish({ ok: false, reason: `zip entry ${entry.fileName}: ${overCap(cap, entry.compressedSize)}` });
          return;
        }
        chunks.push(chunk);
      });
      stream.on('error', (e: Error) =>
        finish({ ok: false, reason: `zip entry ${entry.fileName}: ${e.message}` }),
      );
      stream.on('end', () => finish({ ok: true, bytes: Buffer.concat(chunks, n) }));
    });
  });
}
