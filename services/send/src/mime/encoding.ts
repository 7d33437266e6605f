/**
 * A text body part's Content-Transfer-Encoding and encoded bytes, by nodemailer's rules and with
 * its encoders: 7bit when the text is plain ASCII and no line is over 76, otherwise base64 when
 * non-Latin characters (controls, 8-bit) are at least as many as Latin letters, else
 * quoted-printable; both wrapped at 76.
 *
 * Small bodies are encoded in one synchronous call. Bodies over SYNC_MAX_BYTES (and
 * quoted-printable over one 64 KB encoder slice) go through nodemailer's Encoder streams, as one
 * chunk, so the bytes are the streams' own and a large body does not hold the event loop in one
 * call.
 */
import { PassThrough } from 'node:stream';
import * as base64 from 'nodemailer/lib/base64';
import { hasLongerLines, isPlainText } from 'nodemailer/lib/mime-funcs';
import * as qp from 'nodemailer/lib/qp';

/** Larger content is encoded by the Encoder streams, between turns of the event loop. */
export const SYNC_MAX_BYTES = 256 * 1024;

/** nodemailer's QP Encoder encodes its input in slices of this many bytes. */
const QP_SLICE_BYTES = 64 * 1024;

export type TransferEncoding = '7bit' | 'quoted-printable' | 'base64';

export interface EncodedBody {
  encoding: TransferEncoding;
  body: string | Promise<string>;
}

/** 'Q' when Latin letters outnumber controls and 8-bit characters, else 'B' (RFC 2047 terms). */
export function preferredTextEncoding(value: string): 'Q' | 'B' {
  let nonLatin = 0;
  let latin = 0;
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code <= 0x08 || code === 0x0b || code === 0x0c || (code >= 0x0e && code <= 0x1f) || code >= 0x80)
      nonLatin++;
    else if ((code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a)) latin++;
  }
  return nonLatin < latin ? 'Q' : 'B';
}

const isWsp = (c: number | undefined) => c === 0x20 || c === 0x09;

/**
 * Text quoted-printable encoded and wrapped at 76 as nodemailer's QP Encoder stream writes it
 * (not as `wrap(encode(content))`, which differs at the end): the stream holds back the
 * whitespace its input ends with, encodes the rest, and encodes that whitespace after the last
 * line of the rest, wrapping the two again. Only for content within one encoder slice.
 */
function quotedPrintable(bytes: Buffer): string {
  let end = bytes.length;
  while (end > 0 && isWsp(bytes[end - 1])) end--;
  if (end === bytes.length) return qp.wrap(qp.encode(bytes), 76);
  const head = end > 0 ? qp.wrap(qp.encode(bytes.subarray(0, end)), 76) : '';
  const lastLine = head.lastIndexOf('\n') + 1;
  return head.slice(0, lastLine) + qp.wrap(head.slice(lastLine) + qp.encode(bytes.subarray(end)), 76);
}

/** `bytes` through one of nodemailer's Encoder streams, as a single chunk. */
function throughEncoder(bytes: Buffer, encoder: NodeJS.ReadWriteStream): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const input = new PassThrough();
    encoder.on('data', (chunk: Buffer) => chunks.push(chunk));
    encoder.on('end', () => resolve(Buffer.concat(chunks).toString('latin1')));
    encoder.on('error', reject);
    input.on('error', reject);
    input.pipe(encoder);
    input.end(bytes);
  });
}

/** The transfer encoding and encoded body of a non-empty text part. */
export function encodeTextBody(content: string): EncodedBody {
  if (isPlainText(content) && !hasLongerLines(content, 76)) return { encoding: '7bit', body: content };
  const large = content.length > SYNC_MAX_BYTES / 3 && Buffer.byteLength(content) > SYNC_MAX_BYTES;
  if (preferredTextEncoding(content) === 'B') {
    const body = large
      ? throughEncoder(Buffer.from(content), new base64.Encoder({}))
      : base64.wrap(base64.encode(content), 76);
    return { encoding: 'base64', body };
  }
  const bytes = Buffer.from(content);
  const body =
    bytes.length > QP_SLICE_BYTES
      ? throughEncoder(bytes, new qp.Encoder({ binary: false }))
      : quotedPrintable(bytes);
  return { encoding: 'quoted-printable', body };
}
