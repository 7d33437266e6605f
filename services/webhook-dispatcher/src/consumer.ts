/**
 * The bus entry point: validates each message of the dispatcher's queue (email events,
 * DOMAIN_VERIFICATION, MAILER_DEACTIVATED, MAILER_WEBHOOK) and hands it to the account batcher; the handler
 * resolves (and the message is acknowledged) only once its batch is stored as deliveries.
 * A message that can never be valid is parked (PermanentError); other message types are
 * acknowledged and ignored.
 */
import {
  DOMAIN_VERIFICATION_EVENT,
  DomainVerificationEventSchema,
  EMAIL_EVENT_MESSAGE,
  EmailEventSchema,
  MAILER_DEACTIVATED_EVENT,
  MAILER_WEBHOOK_MESSAGE,
  MailerDeactivatedEventSchema,
  MailerWebhookMessageSchema,
} from '@mailyard/contracts';
import { type Delivery, type Logger, PermanentError } from '@mailyard/platform';
import type { AccountBatcher } from './batch';
import type { DispatchEvent } from './route-event';

export function createDispatchHandler(deps: { batcher: AccountBatcher<DispatchEvent>; logger: Logger }) {
  return async (delivery: Delivery): Promise<void> => {
    const env = delivery.envelope;
    const event = toDispatchEvent(env.type, env.payload, env.occurred_at, env.traceparent);
    if (event === null) {
      deps.logger.debug('ignoring bus message', { type: env.type, routing_key: delivery.routingKey });
      return;
    }
    if (!env.tenant_id) throw new PermanentError(`${env.type} message without tenant_id`);
    await deps.batcher.add(env.tenant_id, event);
  };
}

/** The typed event, null for a message type the dispatcher does not handle; throws PermanentError when invalid. */
export function toDispatchEvent(
  type: string,
  payload: unknown,
  occurredAt: string,
  traceparent?: string,
): DispatchEvent | null {
  const common = { occurredAt, ...(traceparent ? { traceparent } : {}) };
  const parse = <T>(schema: {
    safeParse(v: unknown): { success: true; data: T } | { success: false; error: Error };
  }) => {
    const r = schema.safeParse(payload);
    if (!r.success) throw new PermanentError(`invalid ${type} payload: ${r.error.message.slice(0, 300)}`);
    return r.data;
  };
  switch (type) {
    case EMAIL_EVENT_MESSAGE:
      return { kind: 'email', event: parse(EmailEventSchema), ...common };
    case DOMAIN_VERIFICATION_EVENT:
      return { kind: 'domain', event: parse(DomainVerificationEventSchema), ...common };
    case MAILER_DEACTIVATED_EVENT:
      return { kind: 'mailer', event: parse(MailerDeactivatedEventSchema), ...common };
    case MAILER_WEBHOOK_MESSAGE:
      return { kind: 'mailer-object', message: parse(MailerWebhookMessageSchema), ...common };
    default:
      return null;
  }
}
