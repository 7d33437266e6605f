/**
 * Secrets we issue and later check without being able to show them again: API keys, SparkPost
 * callback passwords, anything "shown once". Each carries 256 bits of randomness, so a plain
 * SHA-256 is a safe lookup hash (no slow KDF needed, unlike user-chosen passwords); the check
 * compares digests in constant time so a wrong guess learns nothing from timing.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A new secret: `prefix` plus 256 bits of randomness, base64url. */
export function issueSecret(prefix = ''): string {
  return prefix + randomBytes(32).toString('base64url');
}

/** The stored form of an issued secret. */
export function digestSecret(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}

/** Whether `given` is the secret whose digest is `stored`; constant time in the secret. */
export function secretMatches(given: string, stored: Uint8Array | null | undefined): boolean {
  if (!stored || stored.length !== 32) return false;
  return timingSafeEqual(digestSecret(given), stored);
}
