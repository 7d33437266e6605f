/**
 * The bus entry point: validates each message of the dispatcher's queue (email events,
 * DOMAIN_VERIFICATION, MAILER_DEACTIVATED, MAILER_WEBHOOK) and hands it to the account batcher; the handler
 * resolves (and the message is acknowledged) only once its batch is stored as deliveries.
 * An `email.event` message is one event (version 1) or a group of one tenant's events (version
 * 2, libs/contracts email-event-message.ts): its events go to the batcher together, so they are
 * stored by one statement, and a crash before that redelivers the message with none of them
 * stored. A message that can never be valid is parked (PermanentError); other message types are
 * acknowledged and ignored.
 */
import {
  DOMAIN_VERIFICATION_EVENT,
  DomainVerificationEventSchema,
  EMAIL_EVENT_MESSAGE,
  MAILER_DEACTIVATED_EVENT,
  MAILER_WEBHOOK_MESSAGE,
  MailerDeactivatedEventSchema,
  MailerWebhookMessageSchema,
  SENDING_PAUSED_EVENT,
  SendingPausedEventSchema,
  decodeEmailEventMessage,
} from '@mailyard/contracts';
import { type Delivery, type Logger, PermanentError } from '@mailyard/platform';
import type { AccountBatcher } from './batch';
import type { DispatchEvent } from './route-event';

export function createDispatchHandler(deps: { batcher: AccountBatcher<DispatchEvent>; logger: Logger }) {
  return async (delivery: Delivery): Promise<void> => {
    const env = delivery.envelope;
    const events = toDispatchEvents(env.type, env.version, env.payload, env.occurred_at, env.traceparent);
    if (events === null) {
      deps.logger.debug('ignoring bus message', { type: env.type, routing_key: delivery.routingKey });
      return;
    }
    if (!env.tenant_id) throw new PermanentError(`${env.type} message without tenant_id`);
    await deps.batcher.add(env.tenant_id, ...events);
  };
}

/**
 * The typed events of a message, null for a message type the dispatcher does not handle; throws
 * PermanentError when invalid.
 */
export function toDispatchEvents(
  type: string,
  version: number,
  payload: unknown,
  occurredAt: string,
  traceparent?: string,
): DispatchEvent[] | null {
  if (type === EMAIL_EVENT_MESSAGE) {
    const decoded = decodeEmailEventMessage(version, payload, traceparent);
    if (!decoded.ok)
      throw new PermanentError(`invalid ${type} version ${version} payload: ${decoded.error.slice(0, 300)}`);
    return decoded.events.map((i) => ({
      kind: 'email',
      event: i.event,
      occurredAt,
      ...(i.traceparent ? { traceparent: i.traceparent } : {}),
    }));
  }
  const event = toDispatchEvent(type, payload, occurredAt, traceparent);
  return event === null ? null : [event];
}

/** The typed event of a single-event message type, null for one the dispatcher does not handle. */
function toDispatchEvent(
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
    case DOMAIN_VERIFICATION_EVENT:
      return { kind: 'domain', event: parse(DomainVerificationEventSchema), ...common };
    case MAILER_DEACTIVATED_EVENT:
      return { kind: 'mailer', event: parse(MailerDeactivatedEventSchema), ...common };
    case SENDING_PAUSED_EVENT:
      return { kind: 'paused', event: parse(SendingPausedEventSchema), ...common };
    case MAILER_WEBHOOK_MESSAGE:
      return { kind: 'mailer-object', message: parse(MailerWebhookMessageSchema), ...common };
    default:
      return null;
  }
}
