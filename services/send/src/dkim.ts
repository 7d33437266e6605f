/**
 * DKIM signing (relaxed/relaxed, rsa-sha256) for domain mailers: the domain's sealed private key
 * and selector. A key that cannot sign is an error, never an unsigned send.
 *
 * The message is already one Buffer, so it is signed without nodemailer's stream pipeline
 * (message parser -> relaxed body transform -> output stream, about 0.25 CPU-ms per copy beside
 * the RSA signature itself): the header block is parsed as nodemailer's MessageParser parses it,
 * the body hash is computed here (relaxed-body.ts, in slices for large messages so the process
 * stays responsive) and the DKIM-Signature field is nodemailer's own (dkim/sign: header
 * selection and canonicalization, folding). The output is byte for byte what nodemailer's signer
 * writes (dkim.test.ts checks it against it). Parsed keys are cached by PEM, so a busy domain
 * does not parse its key per message.
 *
 * The RSA signature (about 0.3 CPU-ms per copy, a quarter of a copy's work) runs on libuv's
 * thread pool (crypto.sign with a callback), not on the event loop: the field is assembled the
 * way nodemailer's dkim/sign assembles it (its header selection, split once here, the tag list folded by its
 * foldLines, the signature folded by its rule), only the signing call is asynchronous. RSA
 * PKCS#1 v1.5 signatures are deterministic, so the bytes are the same.
 */
import { type KeyObject, createPrivateKey, sign as rsaSign } from 'node:crypto';
import { foldLines } from 'nodemailer/lib/mime-funcs';
import { normalizeDomain } from 'nodemailer/lib/shared';
import { relaxedBodyHash } from './relaxed-body';

export class DkimError extends Error {
  override name = 'DkimError';
}

export interface DkimKey {
  domainName: string;
  keySelector: string;
  privateKeyPem: string;
}

/** Parsed keys by their PEM text (the cached mailer holds the same string, whose hash V8 keeps). */
const keys = new Map<string, KeyObject>();
const MAX_CACHED_KEYS = 1000;

function keyObject(pem: string): KeyObject {
  let key = keys.get(pem);
  if (!key) {
    try {
      key = createPrivateKey(pem);
    } catch (err) {
      throw new DkimError(`DKIM private key cannot be read: ${(err as Error).message}`);
    }
    if (keys.size >= MAX_CACHED_KEYS) keys.delete(keys.keys().next().value!);
    keys.set(pem, key);
  }
  return key;
}

/** Where the body starts: after the first empty line (LF LF or LF CR LF), else the end. */
export function bodyStart(raw: Buffer): number {
  for (let i = raw.indexOf(0x0a, 1); i !== -1; i = raw.indexOf(0x0a, i + 1)) {
    if (raw[i - 1] === 0x0a || (raw[i - 1] === 0x0d && i > 1 && raw[i - 2] === 0x0a)) return i + 1;
  }
  return raw.length;
}

/** Drops SP and HTAB at both ends (only those: the relaxed canonicalization's whitespace). */
function trimWsp(s: string): string {
  let start = 0;
  let end = s.length;
  while (start < end && (s[start] === ' ' || s[start] === '\t')) start++;
  while (end > start && (s[end - 1] === ' ' || s[end - 1] === '\t')) end--;
  return s.slice(start, end);
}

/** The header fields as nodemailer's MessageParser gives them to dkim/sign (key lowercased, folded line). */
export function parseHeaderFields(head: Buffer): Array<{ key: string; line: string }> {
  const lines: string[] = [];
  for (const raw of head.toString('binary').split(/\r?\n/)) {
    if (lines.length > 0 && (raw.startsWith(' ') || raw.startsWith('\t')))
      lines[lines.length - 1] += `\n${raw}`;
    else lines.push(raw);
  }
  return lines
    .filter((line) => /[^ \t\r]/.test(line))
    .map((line) => ({ key: trimWsp(line.slice(0, Math.max(0, line.indexOf(':')))).toLowerCase(), line }));
}

/** nodemailer dkim/sign's default field list (RFC 4871 5.5, plus List-Unsubscribe-Post for RFC 8058). */
export const FIELD_NAMES =
  'From:Sender:Reply-To:Subject:Date:Message-ID:To:' +
  'Cc:MIME-Version:Content-Type:Content-Transfer-Encoding:Content-ID:' +
  'Content-Description:Resent-Date:Resent-From:Resent-Sender:' +
  'Resent-To:Resent-Cc:Resent-Message-ID:In-Reply-To:References:' +
  'List-Id:List-Help:List-Unsubscribe:List-Unsubscribe-Post:List-Subscribe:List-Post:' +
  'List-Owner:List-Archive:OTP-Token';

/** FIELD_NAMES as dkim/sign's relaxedHeaders reads it (lowercased, trimmed, in order), split once. */
const INCLUDED_FIELDS: ReadonlySet<string> = new Set(
  FIELD_NAMES.toLowerCase()
    .split(':')
    .map((f) => f.trim()),
);

/**
 * nodemailer dkim/sign's relaxedHeaders for FIELD_NAMES (no skipped fields): per listed field the
 * last occurrence in the header block, relaxed, in the list's order; and the names signed. The
 * field list is split once per process here instead of once per message (the same output: the
 * dkimSign tests compare whole signed messages with nodemailer's signer).
 */
export function relaxedHeaders(headers: ReadonlyArray<{ key: string; line: string }>): {
  headers: string;
  fieldNames: string;
} {
  const found = new Map<string, string>();
  for (let i = headers.length - 1; i >= 0; i--) {
    const { key, line } = headers[i]!;
    if (INCLUDED_FIELDS.has(key) && !found.has(key)) found.set(key, relaxedHeaderLine(line));
  }
  let canonical = '';
  const fields: string[] = [];
  for (const field of INCLUDED_FIELDS) {
    const value = found.get(field);
    if (value === undefined) continue;
    fields.push(field);
    canonical += `${field}:${value}\r\n`;
  }
  return { headers: fields.length > 0 ? canonical : '\r\n', fieldNames: fields.join(':') };
}

/** What a tag value may not carry (it would end the value or open a tag of its own). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it drops
const cleanTagValue = (value: string) => value.replace(/[\x00-\x1f\x7f;=]/g, '');

/** The relaxed form of one header field's value (nodemailer dkim/sign relaxedHeaderLine). */
function relaxedHeaderLine(line: string): string {
  return line
    .slice(line.indexOf(':') + 1)
    .replace(/\r?\n/g, '')
    .replace(/[ \t]+/g, ' ')
    .replace(/^ | $/g, '');
}

/** The RSA-SHA256 signature of `data`, computed on libuv's thread pool. */
function signOffLoop(data: Buffer, key: KeyObject): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    rsaSign('sha256', data, key, (err, signature) => (err ? reject(err) : resolve(signature))),
  );
}

/** Returns `raw` with a DKIM-Signature header prepended. */
export async function dkimSign(raw: Buffer, key: DkimKey): Promise<Buffer> {
  if (!key.domainName || !key.keySelector || !key.privateKeyPem)
    throw new DkimError('DKIM key, selector or domain missing');
  const privateKey = keyObject(key.privateKeyPem);
  const start = bodyStart(raw);
  const bodyHash = await relaxedBodyHash(raw.subarray(start));
  let head: string;
  let signed: Buffer;
  try {
    const canonical = relaxedHeaders(parseHeaderFields(raw.subarray(0, start)));
    const tags = [
      'v=1',
      'a=rsa-sha256',
      'c=relaxed/relaxed',
      `d=${normalizeDomain(cleanTagValue(key.domainName), false)}`,
      'q=dns/txt',
      `s=${cleanTagValue(key.keySelector)}`,
      `bh=${bodyHash}`,
      `h=${cleanTagValue(canonical.fieldNames)}`,
    ].join('; ');
    head = `${foldLines(`DKIM-Signature: ${tags}`, 76)};\r\n b=`;
    // The header lines are 'binary' strings: latin1 gives back the original bytes.
    signed = Buffer.from(`${canonical.headers}dkim-signature:${relaxedHeaderLine(head)}`, 'latin1');
  } catch (err) {
    throw new DkimError(`DKIM signing failed: ${(err as Error).message}`);
  }
  let signature: Buffer;
  try {
    signature = await signOffLoop(signed, privateKey);
  } catch {
    // As nodemailer's signer reports a key that does not sign (e.g. not an RSA key).
    throw new DkimError('DKIM signing failed (the key could not sign)');
  }
  const b = signature
    .toString('base64')
    .replace(/(^.{73}|.{75}(?!\r?\n|\r))/g, '$&\r\n ')
    .trim();
  return Buffer.concat([Buffer.from(`${head}${b}\r\n`), raw]);
}
