/**
 * Standard Webhooks signature verification (docs/webhooks.md "Signatures"):
 *   webhook-signature = "v1," + base64(HMAC-SHA256(key, id + "." + timestamp + "." + body))
 *   key = base64-decode(signing secret without "whsec_")
 * The header may carry several space-separated signatures (during rotation); any match is
 * accepted. Timestamps further than `toleranceSeconds` from now are refused (replays).
 * Verify the raw body bytes, before any JSON parsing re-serialises them.
 *
 * `signWebhook` is the one signer of the tree: the webhook dispatcher signs its deliveries with
 * it, so what a receiver verifies with this module is by construction what was sent.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { MailyardError } from './errors';

export class WebhookVerificationError extends MailyardError {
  override name = 'WebhookVerificationError';
}

export type HeaderBag =
  | Headers
  | Record<string, string | string[] | undefined>
  | { get(name: string): string | null };

function header(headers: HeaderBag, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const rec = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(rec).find((k) => k.toLowerCase() === name);
  const v = key === undefined ? undefined : rec[key];
  return Array.isArray(v) ? v[0] : v;
}

/** The signature of a delivery (the dispatcher's `webhook-signature` header). */
export function signWebhook(
  secret: string,
  id: string,
  timestamp: number | string,
  body: string | Buffer,
): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const mac = createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest('base64');
  return `v1,${mac}`;
}

export interface VerifyOptions {
  /** Accepted distance of webhook-timestamp from now (default 300 s). */
  toleranceSeconds?: number;
  now?: () => number;
}

/**
 * Checks a delivery and returns its parsed JSON body; throws WebhookVerificationError when a
 * header is missing, the timestamp is too old or too new, or no signature matches.
 */
export function verifyWebhook<T = unknown>(
  secret: string,
  rawBody: string | Buffer,
  headers: HeaderBag,
  opts: VerifyOptions = {},
): T {
  const id = header(headers, 'webhook-id');
  const ts = header(headers, 'webhook-timestamp');
  const sigs = header(headers, 'webhook-signature');
  if (!id || !ts || !sigs)
    throw new WebhookVerificationError('missing webhook-id, webhook-timestamp or webhook-signature');
  if (!/^\d+$/.test(ts)) throw new WebhookVerificationError('webhook-timestamp is not a number');
  const now = Math.floor((opts.now?.() ?? Date.now()) / 1000);
  const tolerance = opts.toleranceSeconds ?? 300;
  if (Math.abs(now - Number(ts)) > tolerance)
    throw new WebhookVerificationError('webhook-timestamp is outside the tolerance');
  const expected = Buffer.from(signWebhook(secret, id, ts, rawBody).slice(3), 'base64');
  const match = sigs.split(' ').some((s) => {
    const [version, value] = s.split(',', 2);
    if (version !== 'v1' || !value) return false;
    const given = Buffer.from(value, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!match) throw new WebhookVerificationError('no matching signature');
  const text = typeof rawBody === 'string' ? rawBody : rawBody.toString('utf8');
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new WebhookVerificationError('body is not JSON');
  }
}
