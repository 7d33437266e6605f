/**
 * SparkPost's event webhook wire format (developers.sparkpost.com/api/webhooks, "Webhook Event
 * Types"): a POST body that is a JSON array of `{msys: {<class>_event: {type, event_id,
 * timestamp, ...}}}` (classes message_event, gen_event, unsubscribe_event, track_event,
 * relay_event, ...); `[{msys: {}}]` is the test ping SparkPost sends when a webhook is created.
 *
 * Two levels, so a batch is judged once and its events one by one:
 * - `parseSparkPostBatch`: the envelope, checked before the batch is stored (wrong shape = 400):
 *   an array of at most SPARKPOST_BATCH_MAX_EVENTS objects, each with an object `msys` whose
 *   members are objects. Unknown classes pass (SparkPost adds event types; they are ignored later).
 * - `SparkPostEventSchema`: the fields of one event that we read, lenient where SparkPost is
 *   (numbers sent as strings or numbers, optional members absent or null); an event that does not
 *   fit is dropped on its own, never the batch.
 */
import { z } from 'zod';

/** Most entries in one batch (SparkPost sends batches of a few MB: far fewer). */
export const SPARKPOST_BATCH_MAX_EVENTS = 20_000;

const EnvelopeSchema = z
  .array(z.object({ msys: z.record(z.record(z.unknown())) }).passthrough())
  .max(SPARKPOST_BATCH_MAX_EVENTS);

export type SparkPostBatchCheck =
  | { ok: true /** The event objects of the batch, in order (none for the test ping). */; events: unknown[] }
  | { ok: false; error: string };

/** Checks a decoded request body against the batch envelope; the events it carries. */
export function parseSparkPostBatch(body: unknown): SparkPostBatchCheck {
  if (!Array.isArray(body)) return { ok: false, error: 'The body must be a JSON array of SparkPost events' };
  const parsed = EnvelopeSchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    if (issue?.code === 'too_big')
      return { ok: false, error: `A batch holds at most ${SPARKPOST_BATCH_MAX_EVENTS} events` };
    const where = issue?.path.length ? ` (at ${issue.path.join('.')})` : '';
    return { ok: false, error: `Each element must be {"msys": {"<class>_event": {...}}}${where}` };
  }
  return { ok: true, events: parsed.data.flatMap((entry) => Object.values(entry.msys)) };
}

/** A string SparkPost may also send as a number. */
const text = z.union([z.string(), z.number()]).transform(String);
const optionalText = text.nullish().transform((v) => v ?? undefined);
const meta = z
  .record(z.unknown())
  .nullish()
  .transform((v) => v ?? undefined);

export const SparkPostEventSchema = z
  .object({
    type: z.string().min(1),
    event_id: text.pipe(z.string().min(1).max(200)),
    /** Unix seconds as a string in webhook batches ("1454442600"); RFC 3339 elsewhere. */
    timestamp: text,
    message_id: optionalText,
    transmission_id: optionalText,
    rcpt_to: optionalText,
    raw_rcpt_to: optionalText,
    /** Recipient metadata merged with the transmission's (`{ref_id, copy_id}` from our sends). */
    rcpt_meta: meta,
    /** The transmission's metadata, where SparkPost sends it separately. */
    metadata: meta,
    bounce_class: optionalText,
    error_code: optionalText,
    num_retries: optionalText,
    reason: optionalText,
    raw_reason: optionalText,
    fbtype: optionalText,
  })
  .passthrough();
export type SparkPostEvent = z.infer<typeof SparkPostEventSchema>;

/** SparkPost's `timestamp` as a Date: unix seconds (possibly fractional) or RFC 3339; null if neither. */
export function sparkPostTime(timestamp: string): Date | null {
  const t = timestamp.trim();
  if (/^\d{1,12}(\.\d{1,6})?$/.test(t)) return new Date(Math.round(Number(t) * 1000));
  if (!/^\d{4}-\d{2}-\d{2}T/.test(t)) return null;
  const ms = Date.parse(t);
  return Number.isNaN(ms) ? null : new Date(ms);
}
