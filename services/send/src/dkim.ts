/**
 * DKIM signing (relaxed/relaxed, rsa-sha256) for domain mailers: the domain's sealed private key
 * and selector. A key that cannot sign is an error, never an unsigned send.
 *
 * The message is already one Buffer, so it is signed without nodemailer's stream pipeline
 * (message parser -> relaxed body transform -> output stream, about 0.25 CPU-ms per copy beside
 * the RSA signature itself): the header block is parsed as nodemailer's MessageParser parses it,
 * the body hash is computed here (relaxed-body.ts, in slices for large messages so the process
 * stays responsive) and the DKIM-Signature field is nodemailer's own (dkim/sign: header
 * selection, canonicalization, folding). The output is byte for byte what nodemailer's signer
 * writes (dkim.test.ts checks it against it). Parsed keys are cached by PEM, so a busy domain
 * does not parse its key per message.
 */
import { type KeyObject, createPrivateKey } from 'node:crypto';
import signatureField from 'nodemailer/lib/dkim/sign';
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

/** Returns `raw` with a DKIM-Signature header prepended. */
export async function dkimSign(raw: Buffer, key: DkimKey): Promise<Buffer> {
  if (!key.domainName || !key.keySelector || !key.privateKeyPem)
    throw new DkimError('DKIM key, selector or domain missing');
  const privateKey = keyObject(key.privateKeyPem);
  const start = bodyStart(raw);
  const bodyHash = await relaxedBodyHash(raw.subarray(start));
  let field: string | false;
  try {
    field = signatureField(parseHeaderFields(raw.subarray(0, start)), 'sha256', bodyHash, {
      domainName: key.domainName,
      keySelector: key.keySelector,
      // dkim/sign passes the key to crypto's Sign, which takes a KeyObject as well as a PEM.
      privateKey: privateKey as unknown as string,
    }) as string | false;
  } catch (err) {
    throw new DkimError(`DKIM signing failed: ${(err as Error).message}`);
  }
  if (!field) throw new DkimError('DKIM signing failed (the key could not sign)');
  return Buffer.concat([Buffer.from(`${field}\r\n`), raw]);
}
