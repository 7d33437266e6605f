import {
  BusMessages,
  DOMAIN_VERIFICATION_EVENT,
  type DomainVerificationEvent,
  EMAIL_EVENT_MESSAGE,
  EMAIL_EVENT_MESSAGE_VERSION,
  type EmailEvent,
  type EmailEventType,
  Exchange,
  RoutingKey,
  SUCCESS_EMAIL_EVENTS,
  emptyTracking,
  ulid,
} from '@mailyard/contracts';
import { type Bus, childTraceparent, counter, envelope, metricsRegistry } from '@mailyard/platform';

/** Bus-side helpers of the webhook tests: publish events the way their producers do. */

export function emailEvent(
  event: EmailEventType,
  eventAt: string,
  over: Partial<EmailEvent['details']> = {},
): EmailEvent {
  return {
    event,
    success: SUCCESS_EMAIL_EVENTS.includes(event),
    details: {
      ref_id: ulid(),
      mailer_id: 'domain_test',
      email: ['reader@example.com'],
      custom_args: { n: 1 },
      message_id: '',
      thread_id: '',
      webhook_id: '',
      event_at: eventAt,
      tracking: emptyTracking(),
      failed_reason: '',
      ...(event === 'SMTP_ERROR' ? { attempt: 1, max_attempts: 5, retry_scheduled: true } : {}),
      ...over,
    },
  };
}

export async function publishEmailEvent(
  bus: Bus,
  tenantId: string,
  e: EmailEvent,
  traceparent?: string,
): Promise<void> {
  await bus.publish(
    Exchange.events,
    RoutingKey.emailEvent(e.event),
    envelope(EMAIL_EVENT_MESSAGE, e, {
      version: EMAIL_EVENT_MESSAGE_VERSION,
      tenantId,
      parentTraceparent: traceparent,
    }),
  );
}

/**
 * Several events of one tenant and type in one `email.event` version-2 message, as the event
 * writer publishes a group commit's events; `traces[i]` is the trace of event i.
 */
export async function publishEmailEventGroup(
  bus: Bus,
  tenantId: string,
  events: EmailEvent[],
  traces: Array<string | undefined> = [],
): Promise<void> {
  const def = BusMessages.emailEventGroup;
  const payload = def.schema.parse({
    events: events.map((event, i) => ({ event, traceparent: childTraceparent(traces[i]) })),
  });
  await bus.publish(
    def.exchange,
    def.routingKey(payload),
    envelope(def.name, payload, { version: def.version, tenantId, parentTraceparent: traces[0] }),
  );
}

export async function publishDomainVerification(bus: Bus, tenantId: string, domain: string): Promise<void> {
  const payload: DomainVerificationEvent = {
    event: 'DOMAIN_VERIFICATION',
    details: { domain, verified: true, mailer_id: 'domain_x', custom_args: {}, webhook_id: '' },
  };
  await bus.publish(
    Exchange.events,
    RoutingKey.domainVerification,
    envelope(DOMAIN_VERIFICATION_EVENT, payload, { tenantId }),
  );
}

/** Events the dispatcher has routed and stored so far (its counter on /metrics). */
export async function eventsFlushed(): Promise<number> {
  counter('mailyard_webhook_events_flushed_total', 'x');
  const m = await metricsRegistry.getSingleMetric('mailyard_webhook_events_flushed_total')?.get();
  return m?.values.reduce((a, v) => a + v.value, 0) ?? 0;
}

/** An RFC 3339 UTC stamp `ms` after a fixed base, for ordering assertions. */
export const at = (ms: number) => new Date(Date.UTC(2026, 0, 1) + ms).toISOString();

export { eventually } from './eventually';
