/**
 * PKCE (RFC 7636) with S256: a fresh high-entropy `code_verifier` per login, kept server-side
 * (never in the consent URL), and its `code_challenge` = BASE64URL(SHA256(verifier)) sent to the
 * provider. At the code exchange the provider checks the verifier against the challenge, so an
 * intercepted authorization code is useless without it.
 */
import { createHash, randomBytes } from 'node:crypto';

export interface PkcePair {
  verifier: string;
  challenge: string;
  method: 'S256';
}

/** RFC 7636 section 4.1: 43 to 128 characters of [A-Z a-z 0-9 - . _ ~]. */
const VERIFIER_RE = /^[A-Za-z0-9\-._~]{43,128}$/;

export function isCodeVerifier(value: string): boolean {
  return VERIFIER_RE.test(value);
}

export function codeChallengeOf(verifier: string): string {
  if (!isCodeVerifier(verifier)) throw new Error('not an RFC 7636 code_verifier');
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

/** 32 random bytes as base64url: a 43-character verifier, and its S256 challenge. */
export function newPkce(): PkcePair {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: codeChallengeOf(verifier), method: 'S256' };
}
