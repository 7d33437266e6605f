/**
 * Every message the services write to the transactional outbox, defined once: its envelope
 * type (name), version, payload schema, exchange and routing key. The outbox writer in
 * libs/platform (writeOutbox, outboxMessage) takes one of these and a payload, validates the
 * payload against the schema and assembles the envelope and routing; no call site re-assembles
 * a message type, version, exchange or routing key.
 */
import type { z } from 'zod';
import {
  EMAIL_EVENT_MESSAGE,
  EMAIL_EVENT_MESSAGE_VERSION,
  type EmailEvent,
  EmailEventSchema,
} from '../events/email-event';
import {
  DOMAIN_VERIFICATION_EVENT,
  DOMAIN_VERIFICATION_EVENT_VERSION,
  type DomainVerificationEvent,
  DomainVerificationEventSchema,
} from './domain-verification';
import {
  EMAIL_EVENT_GROUP_VERSION,
  type EmailEventGroup,
  EmailEventGroupSchema,
  emailEventGroupType,
} from './email-event-message';
import {
  INBOUND_MESSAGE_ROUTING_KEY,
  INBOUND_MESSAGE_STORED,
  type InboundMessageStored,
  InboundMessageStoredSchema,
} from './inbound-message';
import {
  MAILER_DEACTIVATED_EVENT,
  MAILER_DEACTIVATED_EVENT_VERSION,
  type MailerDeactivatedEvent,
  MailerDeactivatedEventSchema,
} from './mailer-deactivated';
import {
  MAILER_WEBHOOK_MESSAGE,
  MAILER_WEBHOOK_MESSAGE_VERSION,
  type MailerWebhookMessage,
  MailerWebhookMessageSchema,
} from './mailer-webhook';
import {
  SEND_EMAIL_COMMAND,
  SEND_EMAIL_COMMAND_VERSION,
  type SendEmailMessage,
  SendEmailMessageSchema,
} from './send-command';
import {
  SENDING_PAUSED_EVENT,
  SENDING_PAUSED_EVENT_VERSION,
  type SendingPausedEvent,
  SendingPausedEventSchema,
} from './sending-paused';
import { Exchange, type ExchangeName, RoutingKey } from './topics';

export interface BusMessageDef<T> {
  /** Envelope `type`. */
  name: string;
  /** Envelope `version`. */
  version: number;
  schema: z.ZodType<T, z.ZodTypeDef, unknown>;
  exchange: ExchangeName;
  routingKey: (payload: T) => string;
}

export const BusMessages = {
  /** `send.email`: send copies of accepted sends, each with its own trace (see send-command.ts). */
  sendEmail: {
    name: SEND_EMAIL_COMMAND,
    version: SEND_EMAIL_COMMAND_VERSION,
    schema: SendEmailMessageSchema,
    exchange: Exchange.commands,
    routingKey: () => RoutingKey.sendEmail,
  } satisfies BusMessageDef<SendEmailMessage>,
  /** `email.event`: one spec event object (docs/events.md "The event object"), routed by its event. */
  emailEvent: {
    name: EMAIL_EVENT_MESSAGE,
    version: EMAIL_EVENT_MESSAGE_VERSION,
    schema: EmailEventSchema,
    exchange: Exchange.events,
    routingKey: (e: EmailEvent) => RoutingKey.emailEvent(e.event),
  } satisfies BusMessageDef<EmailEvent>,
  /**
   * `email.event` version 2: several events of one tenant and one event type in one message,
   * routed like each of them (see email-event-message.ts).
   */
  emailEventGroup: {
    name: EMAIL_EVENT_MESSAGE,
    version: EMAIL_EVENT_GROUP_VERSION,
    schema: EmailEventGroupSchema,
    exchange: Exchange.events,
    routingKey: (g: EmailEventGroup) => RoutingKey.emailEvent(emailEventGroupType(g)),
  } satisfies BusMessageDef<EmailEventGroup>,
  /** DOMAIN_VERIFICATION (see domain-verification.ts). */
  domainVerification: {
    name: DOMAIN_VERIFICATION_EVENT,
    version: DOMAIN_VERIFICATION_EVENT_VERSION,
    schema: DomainVerificationEventSchema,
    exchange: Exchange.events,
    routingKey: () => RoutingKey.domainVerification,
  } satisfies BusMessageDef<DomainVerificationEvent>,
  /** MAILER_DEACTIVATED (see mailer-deactivated.ts). */
  mailerDeactivated: {
    name: MAILER_DEACTIVATED_EVENT,
    version: MAILER_DEACTIVATED_EVENT_VERSION,
    schema: MailerDeactivatedEventSchema,
    exchange: Exchange.events,
    routingKey: () => RoutingKey.mailerDeactivated,
  } satisfies BusMessageDef<MailerDeactivatedEvent>,
  /** SENDING_PAUSED (see sending-paused.ts). */
  sendingPaused: {
    name: SENDING_PAUSED_EVENT,
    version: SENDING_PAUSED_EVENT_VERSION,
    schema: SendingPausedEventSchema,
    exchange: Exchange.events,
    routingKey: () => RoutingKey.sendingPaused,
  } satisfies BusMessageDef<SendingPausedEvent>,
  /** `inbound.message`: a raw message the MX service stored, to parse, route and post. */
  inboundMessageStored: {
    name: INBOUND_MESSAGE_STORED,
    version: 1,
    schema: InboundMessageStoredSchema,
    exchange: Exchange.commands,
    routingKey: () => INBOUND_MESSAGE_ROUTING_KEY,
  } satisfies BusMessageDef<InboundMessageStored>,
  /** `mailer.webhook`: one object for a mailer's incoming webhook (see mailer-webhook.ts). */
  mailerWebhook: {
    name: MAILER_WEBHOOK_MESSAGE,
    version: MAILER_WEBHOOK_MESSAGE_VERSION,
    schema: MailerWebhookMessageSchema,
    exchange: Exchange.events,
    routingKey: () => RoutingKey.mailerWebhook,
  } satisfies BusMessageDef<MailerWebhookMessage>,
} as const;
