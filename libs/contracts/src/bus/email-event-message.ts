import { z } from 'zod';
import {
  EMAIL_EVENT_MESSAGE_VERSION,
  type EmailEvent,
  EmailEventSchema,
  type EmailEventType,
} from '../events/email-event';

/**
 * The two shapes of an `email.event` bus message (envelope type EMAIL_EVENT_MESSAGE, Exchange
 * events, routing key RoutingKey.emailEvent(event), envelope tenant_id = the sending tenant):
 *
 * - version 1: the payload is ONE spec event object; the envelope's traceparent is its trace;
 * - version 2 (EMAIL_EVENT_GROUP_VERSION): the payload is `{events: [{event, traceparent}]}`,
 *   several events of ONE tenant and ONE event type (so the routing key stays the event's), in
 *   the order the event writer recorded them: the events of one group commit of the send service
 *   in one bus message instead of one each. Each item keeps the trace of its own send.
 *
 * A consumer accepts both (producers older than version 2, and groups of one event, publish
 * version 1) and must treat a message as a whole: all of its events are stored or none, so a
 * redelivered message never lands half twice. A consumer that predates version 2 parks a group
 * (its payload is not one event object): it is not acknowledged away.
 */
export const EMAIL_EVENT_GROUP_VERSION = 2;

/** One event of a group and the trace it continues. */
export const EmailEventGroupItemSchema = z.object({
  event: EmailEventSchema,
  traceparent: z.string().optional(),
});
export type EmailEventGroupItem = z.infer<typeof EmailEventGroupItemSchema>;

export const EmailEventGroupSchema = z
  .object({ events: z.array(EmailEventGroupItemSchema).min(1) })
  .superRefine((g, ctx) => {
    const type = g.events[0]?.event.event;
    g.events.forEach((item, i) => {
      if (item.event.event !== type)
        ctx.addIssue({
          code: z.ZodIssueCode.custom,
          path: ['events', i, 'event', 'event'],
          message: `every event of a group must be ${type}`,
        });
    });
  });
export type EmailEventGroup = z.infer<typeof EmailEventGroupSchema>;

/** The event type a group's routing key names. */
export function emailEventGroupType(g: EmailEventGroup): EmailEventType {
  return g.events[0]!.event.event;
}

export type DecodedEmailEvents = { ok: true; events: EmailEventGroupItem[] } | { ok: false; error: string };

/**
 * The events of an `email.event` message of either version, each with its trace (version 1: the
 * envelope's). Never throws; `ok: false` for an invalid payload or an unknown version.
 */
export function decodeEmailEventMessage(
  version: number,
  payload: unknown,
  traceparent?: string,
): DecodedEmailEvents {
  if (version === EMAIL_EVENT_MESSAGE_VERSION) {
    const r = EmailEventSchema.safeParse(payload);
    if (!r.success) return { ok: false, error: r.error.message };
    const event = r.data;
    return { ok: true, events: [traceparent ? { event, traceparent } : { event }] };
  }
  if (version === EMAIL_EVENT_GROUP_VERSION) {
    const r = EmailEventGroupSchema.safeParse(payload);
    return r.success ? { ok: true, events: r.data.events } : { ok: false, error: r.error.message };
  }
  return { ok: false, error: `unknown version ${version}` };
}
