/**
 * GET /v1/events/stream (docs/api/events-stream.md): the query filters of the live event
 * stream and the wire format of its frames, shared by the gateway and the client library.
 * Filters combine with AND; `event` is a comma-separated list of event types (OR within).
 * Unknown parameters are refused (a misspelt filter must not silently stream everything).
 */
import { z } from 'zod';
import { ErrorText } from '../errors';
import { EMAIL_EVENT_TYPES, type EmailEvent, type EmailEventType } from '../events/email-event';
import { parseAddress } from '../validation/address';
import { parseWithFieldMessages } from '../validation/messages';
import { queryParam as param } from './query-params';

/** Longest `ref_id` filter (ref ids are 26-character ULIDs; logs accept up to 64 alike). */
const MAX_REF_ID = 64;

export const EventStreamQuerySchema = z
  .object({
    /** Comma-separated event types, e.g. `MAIL_DELIVERED,MAIL_BOUNCE`. */
    event: param(
      z.string().transform((v, ctx) => {
        const types = [...new Set(v.split(',').map((t) => t.trim().toUpperCase()))].filter(Boolean);
        const unknown = types.filter((t) => !(EMAIL_EVENT_TYPES as readonly string[]).includes(t));
        if (types.length === 0 || unknown.length > 0) {
          ctx.addIssue({
            code: 'custom',
            message: `event must be a comma-separated list of ${EMAIL_EVENT_TYPES.join(', ')}`,
          });
          return z.NEVER;
        }
        return types as EmailEventType[];
      }),
    ),
    ref_id: param(z.string().max(MAX_REF_ID, `ref_id must be at most ${MAX_REF_ID} characters`)),
    /** A recipient address, matched case-insensitively against the event's `details.email`. */
    email: param(
      z.string().transform((v, ctx) => {
        const parsed = parseAddress(v);
        if (parsed) return parsed.email.toLowerCase();
        ctx.addIssue({ code: 'custom', message: ErrorText.invalidEmail });
        return z.NEVER;
      }),
    ),
  })
  .strict('unknown query parameter: the filters are event, ref_id and email');
export type EventStreamQuery = z.output<typeof EventStreamQuerySchema>;

/** Parses the query; the first problem's message, e.g. `event must be a comma-separated list of ...`. */
export const parseEventStreamQuery = (input: unknown) =>
  parseWithFieldMessages(EventStreamQuerySchema, input);

/** Whether `event` passes the filters of `q`. */
export function eventStreamMatches(q: EventStreamQuery, event: EmailEvent): boolean {
  if (q.event && !q.event.includes(event.event)) return false;
  if (q.ref_id !== undefined && event.details.ref_id !== q.ref_id) return false;
  if (q.email !== undefined) {
    const want = q.email;
    if (!event.details.email.some((e) => e.toLowerCase() === want)) return false;
  }
  return true;
}

/**
 * The SSE `id:` of an event: the id of the bus message that carried it and its place in that
 * message (`<envelope id>.<index>`). The same on every gateway replica (they all read the same
 * messages), so a client may send it back as Last-Event-ID to any of them.
 */
export const eventStreamId = (envelopeId: string, index: number): string => `${envelopeId}.${index}`;

/** What the stream sends in its first comment line, so a client sees it is connected. */
export const EVENT_STREAM_HELLO = ': connected';
