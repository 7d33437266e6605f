import { z } from 'zod';
import { PAUSE_METRICS, PAUSE_SCOPES } from '../deliverability/reputation';

/**
 * SENDING_PAUSED on Exchange.events, routing key RoutingKey.sendingPaused; the envelope's
 * tenant_id is the paused sender's tenant. Written with the pause in one transaction (libs/store
 * reputation.ts), once per pause. The payload is the webhook body docs/events.md describes under
 * SENDING_PAUSED; the webhook dispatcher sends it to the tenant's EMAIL_EVENT webhook as a
 * one-element array, bypassing the events.* filters, like MAILER_DEACTIVATED of SMTP-only mailers.
 *
 * details: `scope` says what paused. A domain pause names the From `domain`; a mailer pause its
 * `mailer_id` and, in `domain`, the From domain of the copy whose bounce or complaint tipped it.
 * `rate` (0..1) of `metric` over `window` copies (the copies counted, at most REPUTATION_WINDOW),
 * `threshold` the setting it went above, `paused_at` RFC 3339 UTC.
 */
export const SENDING_PAUSED_EVENT = 'sending.paused';
export const SENDING_PAUSED_EVENT_VERSION = 1;

export const SendingPausedEventSchema = z.object({
  event: z.literal('SENDING_PAUSED'),
  success: z.literal(false),
  details: z.object({
    scope: z.enum(PAUSE_SCOPES),
    domain: z.string(),
    /** Present for a mailer pause only. */
    mailer_id: z.string().optional(),
    metric: z.enum(PAUSE_METRICS),
    rate: z.number().min(0).max(1),
    window: z.number().int().nonnegative(),
    threshold: z.number().min(0).max(1),
    paused_at: z.string(),
  }),
});
export type SendingPausedEvent = z.infer<typeof SendingPausedEventSchema>;
