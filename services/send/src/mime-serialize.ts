/**
 * Writes a message compiled by nodemailer's MailComposer (a MimeNode tree) to one Buffer in a
 * single synchronous pass, with the bytes MimeNode.build() would produce: every node's own
 * header block (MimeNode.buildHeaders), its content encoded with nodemailer's encoders
 * (base64/quoted-printable, wrapped at 76; quoted-printable as its Encoder stream writes it,
 * qpLikeEncoder), pre-built `raw` parts as they are, the same
 * boundaries and the terminating line break build() adds.
 *
 * Why: build() streams each part through a pipeline of Transform streams (an AbortController,
 * timers and buffers per part); for a small message that machinery is most of the cost of
 * building it (about 0.45 of 0.55 CPU-ms per copy measured by bench/send). The tree, its header
 * rules and the encoders are still nodemailer's; only the plumbing is replaced.
 *
 * Returns null for trees it does not write itself, and the caller uses build(): content that is
 * a stream or a file/URL reference, quoted-printable outside text/* or over 64 KB, or content
 * larger than SYNC_MAX_BYTES (build() encodes that in slices and keeps the process responsive).
 */
import * as base64 from 'nodemailer/lib/base64';
import type MimeNode from 'nodemailer/lib/mime-node';
import * as qp from 'nodemailer/lib/qp';

/** Larger content is left to build(), which encodes it in slices between turns of the event loop. */
export const SYNC_MAX_BYTES = 256 * 1024;

/** nodemailer's QP Encoder encodes its input in slices of this many bytes (qp ENCODE_SLICE_SIZE). */
const QP_SLICE_BYTES = 64 * 1024;

const isWsp = (c: number | undefined) => c === 0x20 || c === 0x09;

/**
 * Text quoted-printable encoded and wrapped at 76 as nodemailer's QP Encoder stream writes it
 * (not as `wrap(encode(content))`, which differs at the end): the stream holds back the
 * whitespace its input ends with, encodes the rest, and encodes that whitespace after the last
 * line of the rest, wrapping the two again. Null for content over one encoder slice (the stream
 * encodes slices with the byte that follows each in view, which qp.encode cannot be told).
 */
export function qpLikeEncoder(content: string | Buffer): string | null {
  const bytes = typeof content === 'string' ? Buffer.from(content) : content;
  if (bytes.length > QP_SLICE_BYTES) return null;
  let end = bytes.length;
  while (end > 0 && isWsp(bytes[end - 1])) end--;
  if (end === bytes.length) return qp.wrap(qp.encode(bytes), 76);
  const head = end > 0 ? qp.wrap(qp.encode(bytes.subarray(0, end)), 76) : '';
  const lastLine = head.lastIndexOf('\n') + 1;
  return head.slice(0, lastLine) + qp.wrap(head.slice(lastLine) + qp.encode(bytes.subarray(end)), 76);
}

/** The MimeNode fields this writer reads (`_raw` is what setRaw() stored). */
interface Node {
  _raw?: unknown;
  content?: unknown;
  contentType?: string;
  multipart?: boolean;
  boundary?: string | false;
  childNodes: Node[];
  getTransferEncoding(): string | false;
  buildHeaders(): string;
}

const plain = (v: unknown): v is string | Buffer => typeof v === 'string' || Buffer.isBuffer(v);
const size = (v: string | Buffer) => (typeof v === 'string' ? Buffer.byteLength(v) : v.length);

/**
 * Appends the node's bytes to `out` as MimeNode.stream() writes them; false (and `out` is to be
 * dropped) when the node holds something only build() writes. buildHeaders() runs first, as in
 * stream(): it sets what the encoding depends on (contentType, Content-Transfer-Encoding).
 */
function write(node: Node, out: Array<string | Buffer>): boolean {
  if (node._raw) {
    if (!plain(node._raw) || size(node._raw) > SYNC_MAX_BYTES) return false;
    out.push(node._raw);
    return true;
  }
  const encoding = node.getTransferEncoding();
  out.push(`${node.buildHeaders()}\r\n\r\n`);
  const content = node.content;
  if (content) {
    if (!plain(content) || size(content) > SYNC_MAX_BYTES) return false;
    if (encoding === 'base64') out.push(base64.wrap(base64.encode(content), 76));
    else if (encoding === 'quoted-printable') {
      // stream() encodes non-text content in QP's binary mode (lone CR/LF are data): not here.
      if (!/^text\//i.test(node.contentType ?? '')) return false;
      const encoded = qpLikeEncoder(content);
      if (encoded === null) return false;
      out.push(encoded);
    } else out.push(content);
  }
  if (!node.multipart) return true;
  for (const [i, child] of node.childNodes.entries()) {
    out.push(`${i > 0 ? '\r\n' : ''}--${node.boundary}\r\n`);
    if (!write(child, out)) return false;
  }
  out.push(`\r\n--${node.boundary}--\r\n`);
  return true;
}

/** The message as build() writes it, or null when the tree needs build() (see the file comment). */
export function serializeMimeTree(root: MimeNode): Buffer | null {
  const out: Array<string | Buffer> = [];
  if (!write(root as unknown as Node, out)) return null;
  const raw = Buffer.concat(out.map((p) => (typeof p === 'string' ? Buffer.from(p) : p)));
  // build() ends the message with a line break (nodemailer's LastNewline).
  const last = raw[raw.length - 1];
  if (last === 0x0a) return raw;
  return Buffer.concat([raw, Buffer.from(last === 0x0d ? '\n' : '\r\n')]);
}
