import { z } from 'zod';

/**
 * DOMAIN_VERIFICATION on Exchange.events, routing key RoutingKey.domainVerification; the
 * envelope's tenant_id is the domain's tenant. The payload is the webhook body docs/events.md
 * describes under DOMAIN_VERIFICATION; `details.webhook_id` is "" on the bus and filled in by the
 * webhook dispatcher.
 */
export const DOMAIN_VERIFICATION_EVENT = 'domain.verification';
export const DOMAIN_VERIFICATION_EVENT_VERSION = 1;

export const DomainVerificationEventSchema = z.object({
  event: z.literal('DOMAIN_VERIFICATION'),
  details: z.object({
    domain: z.string(),
    verified: z.boolean(),
    mailer_id: z.string(),
    custom_args: z.record(z.unknown()),
    webhook_id: z.string(),
  }),
});
export type DomainVerificationEvent = z.infer<typeof DomainVerificationEventSchema>;
