import { createHash } from 'node:crypto';
import { ErrorText, type SendRequest } from '@mailyard/contracts';
import { type HttpRequest, badRequest } from '@mailyard/platform';

/** How long a key is remembered per tenant; an older send's key is released and reused. */
export const IDEMPOTENCY_TTL_SECONDS = 24 * 60 * 60;

const KEY = /^[\x20-\x7E]{1,255}$/;

/** The `Idempotency-Key` header: absent = null; present = 1 to 255 printable ASCII characters, else 400. */
export function idempotencyKeyOf(req: Pick<HttpRequest, 'headers'>): string | null {
  const raw = req.headers['idempotency-key'] as string | undefined;
  if (raw === undefined) return null;
  if (!KEY.test(raw)) throw badRequest(ErrorText.idempotencyKeyInvalid);
  return raw;
}

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
