/**
 * What the inbound service needs to act on mail about our own sends (bounces, complaints,
 * mailto unsubscribes; services/inbound-smtp service-mail.ts), as opposed to mail for tenants
 * (`applyFeedbackIn` also writes the tracking service's SparkPost callback events, with the
 * provider's time and, for final outcomes, the copy's attempt):
 * - the recipients of a copy (a VERP return path names a copy; the recipient is found among
 *   them by its signed tag) and the recipient of one email_logs row (a mailto unsubscribe);
 * - `applyFeedbackIn`: one outcome written inside the inbound message's completing transaction
 *   (inboundMessages.complete), so a redelivered bus message never records twice: the event
 *   through the single event writer (recordEmailEventsIn: event row, log status, outbox for
 *   webhooks) and the tenant's suppression (suppressions.add, the same rule the send service
 *   reads). An unsubscribe follows the one rule of unsubscribes (suppressions.ts `unsubscribeIn`,
 *   which the one-click POST of the tracking service uses too).
 * No tenant is known beforehand: the signed address is the proof, so lookups are by id.
 */
import type { EmailEvent } from '@mailyard/contracts';
import type { Queryable } from '@mailyard/platform';
import { recordEmailEventsIn } from './email-events';
import { type SuppressionReasonValue, suppressions, unsubscribeIn } from './suppressions';
import {
  TRACKED_RECIPIENT_SELECT,
  type TrackedRecipient,
  type TrackedRecipientRow,
  toTrackedRecipient,
} from './tracked-recipient';

/** The recipients (email_logs rows) of copy `copyId`, of whichever tenant; [] when unknown. */
export async function findCopyRecipients(db: Queryable, copyId: string): Promise<TrackedRecipient[]> {
  const { rows } = await db.query<TrackedRecipientRow>(
    `${TRACKED_RECIPIENT_SELECT} WHERE l.copy_id = $1 ORDER BY l.id`,
    [copyId],
  );
  return rows.map(toTrackedRecipient);
}

/** The recipient of email_logs row `logId`, of whichever tenant; null when unknown. */
export async function findLogRecipient(db: Queryable, logId: string): Promise<TrackedRecipient | null> {
  const { rows } = await db.query<TrackedRecipientRow>(`${TRACKED_RECIPIENT_SELECT} WHERE l.id = $1`, [
    logId,
  ]);
  return rows[0] ? toTrackedRecipient(rows[0]) : null;
}

export interface FeedbackOutcome {
  recipient: TrackedRecipient;
  /** The spec event to record for the recipient (MAIL_BOUNCE, MAIL_SPAM, MAIL_UNSUBSCRIBED). */
  event: EmailEvent;
  /** Add the address to the tenant's suppression list for this reason (ref_id: the recipient's send); null: do not. */
  suppress: SuppressionReasonValue | null;
  traceparent?: string;
  /** When it happened, as its source reported it (provider callbacks); absent: now. */
  eventAt?: Date;
  /**
   * The send attempt a provider's final outcome (delivery, rejection) concludes: recorded as a
   * send event (one terminal event per copy); absent for feedback after a send.
   */
  attempt?: number;
}

/**
 * Writes one outcome inside `tx`; returns the event as recorded, or null when nothing was
 * recorded (an unsubscribe of an address already suppressed).
 */
export async function applyFeedbackIn(tx: Queryable, o: FeedbackOutcome): Promise<EmailEvent | null> {
  const r = o.recipient;
  const record = async () => {
    const [recorded] = await recordEmailEventsIn(tx, [
      {
        tenantId: r.tenantId,
        copyId: r.copyId,
        recipients: [{ logId: r.logId, email: r.email }],
        event: o.event,
        ...(o.traceparent ? { traceparent: o.traceparent } : {}),
        ...(o.eventAt ? { eventAt: o.eventAt } : {}),
        ...(o.attempt !== undefined ? { attempt: o.attempt } : {}),
      },
    ]);
    return recorded ?? null;
  };
  if (o.event.event === 'MAIL_UNSUBSCRIBED')
    return o.suppress ? unsubscribeIn(tx, r.tenantId, r.email, record, o.suppress, r.refId) : null;
  if (o.suppress) await suppressions.add(tx, r.tenantId, r.email, o.suppress, r.refId);
  return record();
}
