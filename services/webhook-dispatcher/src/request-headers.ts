import { signWebhook } from '@mailyard/client';
/**
 * The headers of one webhook attempt, or why the request cannot be built. Contract:
 * - the configured custom headers and the delivery's own (X-History-Backfill-Job-Id) must pass
 *   the rule every webhook's headers pass at registration (contracts validation/webhook-headers.ts;
 *   only the delivery's own may use the service's delivery header names);
 *   headers stored before that rule existed (a `Transfer-Encoding`, a control character) make the
 *   attempt a failed one saying which header, never a request that frames a second one or that
 *   Node refuses to build (which would throw with no attempt recorded);
 * - what passes is sent verbatim, a custom `User-Agent` included (it replaces ours);
 * - then the service's own: Content-Type application/json, traceparent, and the Standard Webhooks
 *   headers webhook-id (the delivery id, the same on every retry), webhook-timestamp (seconds) and
 *   webhook-signature (when the target has a signing secret). The rule refuses these names, so a
 *   custom header never shadows them.
 */
import { checkWebhookHeaders } from '@mailyard/contracts';

export const USER_AGENT = 'Mailyard-Webhooks/1.0';

export interface HeaderSource {
  /** The target's configured custom headers. */
  headers: Record<string, string>;
  /** The delivery's own extra headers, beside the configured ones. */
  extraHeaders?: Record<string, string> | null;
  body: string;
  deliveryId: string;
  secret: string | null;
  traceparent: string | null;
}

export function requestHeaders(
  req: HeaderSource,
  timestampS: number,
): { ok: true; headers: Record<string, string> } | { ok: false; error: string } {
  const configured = checkWebhookHeaders(req.headers, 'headers');
  if (!configured.ok) return { ok: false, error: `stored headers refused: ${configured.error}` };
  const extra = checkWebhookHeaders(req.extraHeaders ?? {}, 'delivery headers', { delivery: true });
  if (!extra.ok) return { ok: false, error: `stored headers refused: ${extra.error}` };
  const custom = { ...configured.headers, ...extra.headers };
  const hasAgent = Object.keys(custom).some((n) => n.toLowerCase() === 'user-agent');
  const headers: Record<string, string> = hasAgent ? custom : { 'User-Agent': USER_AGENT, ...custom };
  headers['Content-Type'] = 'application/json';
  if (req.traceparent) headers.traceparent = req.traceparent;
  headers['webhook-id'] = req.deliveryId;
  headers['webhook-timestamp'] = String(timestampS);
  if (req.secret)
    headers['webhook-signature'] = signWebhook(req.secret, req.deliveryId, timestampS, req.body);
  return { ok: true, headers };
}
