import { createHash, randomBytes } from 'node:crypto';

/** Readable prefix that marks a string as a Mailyard API key (and helps secret scanners). */
export const API_KEY_PREFIX = 'myk_';

/** A new key: the prefix plus 256 bits of randomness, base64url. */
export function generateApiKey(): string {
  return API_KEY_PREFIX + randomBytes(32).toString('base64url');
}

/** Keys carry 256 bits of entropy, so a plain SHA-256 is a safe, fast lookup hash. */
export function hashApiKey(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

/** What is stored and shown for a key: its first characters. */
export function displayPrefix(key: string): string {
  return key.slice(0, API_KEY_PREFIX.length + 6);
}
