import { ErrorText } from '@mailyard/contracts';
import { type HttpRequest, badRequest } from '@mailyard/platform';

const KEY = /^[\x20-\x7E]{1,255}$/;

/**
 * The `Idempotency-Key` header: absent = null; present = 1 to 255 printable ASCII characters, else
 * 400. What the key then means (its lifetime, the request fingerprint) is the shared acceptance's
 * (libs/store send-accept/request-hash.ts).
 */
export function idempotencyKeyOf(req: Pick<HttpRequest, 'headers'>): string | null {
  const raw = req.headers['idempotency-key'] as string | undefined;
  if (raw === undefined) return null;
  if (!KEY.test(raw)) throw badRequest(ErrorText.idempotencyKeyInvalid);
  return raw;
}
