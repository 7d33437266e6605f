import { z } from 'zod';
import { CONFIG_TYPES } from '../mailers/types';

/**
 * MAILER_DEACTIVATED on Exchange.events, routing key RoutingKey.mailerDeactivated; the
 * envelope's tenant_id is the mailer's tenant. The payload is the webhook body docs/events.md
 * describes under MAILER_DEACTIVATED. Routing (done by the webhook dispatcher): IMAP-capable config
 * types go to the mailer's own incoming webhook as one object; SMTP-only ones to the tenant's
 * EMAIL_EVENT webhook as a one-element array, bypassing the events.* filters.
 * Emitted only for automatic deactivation (libs/store deactivateMailer).
 */
export const MAILER_DEACTIVATED_EVENT = 'mailer.deactivated';
export const MAILER_DEACTIVATED_EVENT_VERSION = 1;

export const MailerDeactivatedEventSchema = z.object({
  event: z.literal('MAILER_DEACTIVATED'),
  success: z.literal(false),
  details: z.object({
    mailer_id: z.string(),
    config_type: z.enum(CONFIG_TYPES),
    failed_reason: z.enum(['oauth_revoked', 'provider_auth_error']),
    /** Omitted when empty. */
    provider_error: z.string().min(1).optional(),
  }),
});
export type MailerDeactivatedEvent = z.infer<typeof MailerDeactivatedEventSchema>;
