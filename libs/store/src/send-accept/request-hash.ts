/**
 * Idempotency of accepted sends: how long an `Idempotency-Key` is remembered, and the
 * fingerprint that tells a retried request from another request under the same key. Shared by
 * every entry point that accepts sends (the gateway's POST /v1/email/send reads the key from its
 * header: services/gateway/src/send/idempotency.ts).
 */
import { createHash } from 'node:crypto';
import type { SendRequest } from '@mailyard/contracts';

/** How long a key is remembered per tenant; an older send's key is released and reused. */
export const IDEMPOTENCY_TTL_SECONDS = 24 * 60 * 60;

/** JSON with object keys sorted at every level, so equal requests serialize equally. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * Fingerprint of a validated request: two bodies that normalize alike (key order, address
 * case of domains, null vs absent) are the same request for Idempotency-Key purposes.
 */
export function requestHash(request: SendRequest): string {
  return createHash('sha256').update(canonical(request)).digest('base64url');
}
