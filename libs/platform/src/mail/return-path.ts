/**
 * The addresses the service owns on its bounce domain (BOUNCE_DOMAIN, default SERVICE_DOMAIN),
 * signed so that mail to them can be attributed without trusting its content:
 *
 * - VERP return path (the SMTP envelope sender of mail we deliver as the MTA):
 *   `bounce+<copy_id>.<tag>@<bounce domain>`, tag = HMAC(key, copy_id + recipient). A DSN
 *   arrives at the address of exactly one recipient of one copy; a forged bounce cannot name
 *   another send (it needs the tag) nor another recipient of the same copy (the tag binds it).
 *   The recipient is not in the address: the inbound service finds it among the copy's
 *   recipients by recomputing the tag (so a report that redacts the recipient still resolves).
 * - List-Unsubscribe mailto: `unsubscribe+<log_id>.<tag>@<bounce domain>`, tag = HMAC(key,
 *   log_id): the email_logs row names tenant, send and address.
 *
 * Both fit the 64-character local-part limit (RFC 5321 4.5.3.1.1): the ids are ULIDs and the
 * tag is 80 bits in lowercase base32 (16 characters). Parsing and verifying are case-insensitive
 * (some MTAs change the case of local parts). The key is HKDF of SECRET_KEY with its own info, so
 * send and inbound replicas share it and the sealing key is never used for addresses. Pure
 * (node:crypto only); anything malformed is simply not ours (null / false).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Sealer } from '../secrets/sealer';

/** The key of return-path and unsubscribe tags: HKDF of SECRET_KEY with a purpose of its own. */
export function returnPathKey(sealer: Sealer): Buffer {
  return sealer.deriveKey('mailyard return path v1');
}

const TAG_BYTES = 10;
const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';
const TAG_RE = /^[a-z2-7]{16}$/;
const ULID_RE = /^[0-9A-HJKMNP-TV-Z]{26}$/;
const COPY_RE = /^([0-9A-HJKMNP-TV-Z]{26})\.([1-9][0-9]{0,5})$/;

function base32(bytes: Buffer): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
}

function tag(key: Buffer, kind: 'b' | 'u', ...parts: string[]): string {
  const mac = createHmac('sha256', key).update(`mrp1\0${kind}`);
  for (const p of parts) mac.update('\0').update(p);
  return base32(mac.digest().subarray(0, TAG_BYTES));
}

function sameTag(given: string, expected: string): boolean {
  const a = Buffer.from(given.toLowerCase());
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

const canonicalCopy = (copyId: string): string | null => {
  const m = COPY_RE.exec(copyId.toUpperCase());
  return m ? `${m[1]}.${m[2]}` : null;
};

/** The VERP return path of `recipient` of copy `copyId`. */
export function verpAddress(key: Buffer, copyId: string, recipient: string, bounceDomain: string): string {
  const copy = canonicalCopy(copyId);
  if (!copy) throw new Error(`not a copy id: ${copyId}`);
  return `bounce+${copy}.${tag(key, 'b', copy, recipient.toLowerCase())}@${bounceDomain}`;
}

/** The List-Unsubscribe mailto address of email_logs row `logId`. */
export function unsubscribeAddress(key: Buffer, logId: string, bounceDomain: string): string {
  const id = logId.toUpperCase();
  if (!ULID_RE.test(id)) throw new Error(`not a log id: ${logId}`);
  return `unsubscribe+${id}.${tag(key, 'u', id)}@${bounceDomain}`;
}

/** What a local part on the bounce domain names, before any database lookup. */
export type ServiceAddress =
  | { kind: 'bounce'; copyId: string; tag: string }
  | { kind: 'unsubscribe'; logId: string; tag: string };

/** Parses the local part of an address on the bounce domain; null when it is none of ours. */
export function parseServiceAddress(localPart: string): ServiceAddress | null {
  if (localPart.length > 64) return null;
  const lower = localPart.toLowerCase();
  const plus = lower.indexOf('+');
  const dot = lower.lastIndexOf('.');
  if (plus <= 0 || dot <= plus) return null;
  const prefix = lower.slice(0, plus);
  const id = lower.slice(plus + 1, dot).toUpperCase();
  const t = lower.slice(dot + 1);
  if (!TAG_RE.test(t)) return null;
  if (prefix === 'bounce') {
    const copyId = canonicalCopy(id);
    return copyId ? { kind: 'bounce', copyId, tag: t } : null;
  }
  if (prefix === 'unsubscribe' && ULID_RE.test(id)) return { kind: 'unsubscribe', logId: id, tag: t };
  return null;
}

/** True when `address` (parsed) is the return path of `recipient` of its copy. */
export function verpNamesRecipient(
  key: Buffer,
  address: { copyId: string; tag: string },
  recipient: string,
): boolean {
  return sameTag(address.tag, tag(key, 'b', address.copyId, recipient.toLowerCase()));
}

/** True when the unsubscribe address's tag was made with `key`. */
export function unsubscribeTagValid(key: Buffer, address: { logId: string; tag: string }): boolean {
  return sameTag(address.tag, tag(key, 'u', address.logId));
}

/** The ref_id of a copy id (`<ref_id>.<n>`). */
export const refIdOfCopy = (copyId: string): string => copyId.slice(0, copyId.lastIndexOf('.'));
