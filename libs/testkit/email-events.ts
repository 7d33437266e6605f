/**
 * Collecting the email events a test's services publish on the real bus, the way a production
 * consumer must read them (libs/contracts bus/email-event-message.ts):
 *
 * - an `email.event` message is version 1 (one event) or version 2 (`{events: [...]}`, the events
 *   of one tenant and type from one group commit of the send service). Which one a producer
 *   publishes depends on timing (two copies finishing in one group commit share a message), so a
 *   collector that read only version 1 failed only under load;
 * - delivery is at-least-once: the same message (same envelope id) may arrive twice. Its events
 *   are kept once, so a test counting events counts distinct events, never redeliveries.
 *
 * A message that is not a valid `email.event` of either version is recorded in `invalid` (and
 * not acknowledged, as a production consumer would park it); `events()` then throws with the
 * reason, so a wait on it fails saying why instead of only timing out.
 */
import { type EmailEvent, Exchange, decodeEmailEventMessage } from '@mailyard/contracts';
import type { Bus, Consumer } from '@mailyard/platform';

export interface CollectedEmailEvent {
  event: EmailEvent;
  /** The trace this event continues (version 1: the envelope's; version 2: its item's). */
  traceparent?: string;
}

export interface EmailEventCollector {
  /** Every distinct event published so far, in arrival order; throws if an invalid message came. */
  events(): EmailEvent[];
  /** The same, each with its trace. */
  items(): CollectedEmailEvent[];
  /** Why each invalid `email.event` message was refused. */
  invalid: string[];
  cancel(): Promise<void>;
}

/** Consumes every `email.#` message of Exchange.events on `bus` into a fresh queue named `queue`. */
export async function collectEmailEvents(bus: Bus, queue: string): Promise<EmailEventCollector> {
  const seen = new Set<string>();
  const collected: CollectedEmailEvent[] = [];
  const invalid: string[] = [];
  const consumer: Consumer = await bus.consume(
    { queue, bindings: [{ exchange: Exchange.events, routingKey: 'email.#' }] },
    async (d) => {
      const decoded = decodeEmailEventMessage(d.envelope.version, d.envelope.payload, d.envelope.traceparent);
      if (!decoded.ok) {
        invalid.push(`${d.envelope.id}: ${decoded.error}`);
        throw new Error(`invalid email.event message: ${decoded.error}`);
      }
      if (seen.has(d.envelope.id)) return; // a redelivery or duplicate publish of one message
      seen.add(d.envelope.id);
      collected.push(...decoded.events);
    },
  );
  const items = () => {
    if (invalid.length > 0) throw new Error(`invalid email.event message(s): ${invalid.join('; ')}`);
    return collected;
  };
  return {
    items,
    events: () => items().map((i) => i.event),
    invalid,
    cancel: () => consumer.cancel(),
  };
}
