/**
 * Records the events of one attempt in the caller's transaction, each as:
 * 1. an `email_events` row, unique on (copy_id, event, attempt): ON CONFLICT DO NOTHING makes a
 *    redelivered command harmless; an event that already existed is neither applied nor
 *    published again;
 * 2. the recipients' `email_logs` rows: status only ever moves to a higher rank
 *    (statusRankSql from libs/contracts), last_event/failure_reason follow unless the status
 *    would move backwards, message_id and delivered_at on delivery, attempts = highest attempt;
 * 3. an outbox row: the spec event object on Exchange.events, routing key
 *    RoutingKey.emailEvent(event), published by the service's OutboxRelay.
 */
import {
  EMAIL_EVENT_MESSAGE,
  EMAIL_EVENT_MESSAGE_VERSION,
  type EmailEvent,
  type EmailEventType,
  Exchange,
  RoutingKey,
  SUCCESS_EMAIL_EVENTS,
  emptyTracking,
  statusForEvent,
  statusRankSql,
} from '@mailyard/contracts';
import { type Queryable, enqueueOutbox, envelope } from '@mailyard/platform';

export interface EventRecipient {
  logId: string;
  email: string;
  /** This recipient's own failure text for its log row ('' on success). */
  failureReason: string;
}

export interface PlannedEvent {
  event: EmailEventType;
  /**
   * The copy the event is recorded under. Normally the command's copy; the final failures of an
   * attempt that also scheduled a retry for other recipients get a split copy id (see consumer),
   * and their log rows move to it.
   */
  copyId: string;
  moveRows?: boolean;
  recipients: EventRecipient[];
  failedReason: string;
  providerError?: string;
  messageId: string;
  /** The rendered subject, written to the log rows when known. */
  subject?: string;
  send?: { attempt: number; maxAttempts: number; retryScheduled: boolean };
}

export interface EventContext {
  tenantId: string;
  refId: string;
  mailerId: string;
  customArgs: Record<string, unknown> | null;
  attempt: number;
}

/** The spec event object (SPEC.md "Event object"); webhook_id is filled by the dispatcher. */
export function buildEmailEvent(ctx: EventContext, p: PlannedEvent, eventAt: string): EmailEvent {
  const details: EmailEvent['details'] = {
    ref_id: ctx.refId,
    mailer_id: ctx.mailerId,
    email: p.recipients.map((r) => r.email),
    custom_args: ctx.customArgs ?? null,
    message_id: p.messageId,
    thread_id: '',
    webhook_id: '',
    event_at: eventAt,
    tracking: emptyTracking(),
    failed_reason: p.failedReason,
  };
  if (p.send) {
    details.attempt = p.send.attempt;
    details.max_attempts = p.send.maxAttempts;
    details.retry_scheduled = p.send.retryScheduled;
    if (p.providerError) details.provider_error = p.providerError;
  }
  return { event: p.event, success: SUCCESS_EMAIL_EVENTS.includes(p.event), details };
}

const NEW_STATUS = '$2::text';
const UPDATE_LOGS = `
UPDATE email_logs l SET
  status = CASE WHEN ${NEW_STATUS} IS NOT NULL AND ${statusRankSql(NEW_STATUS)} > ${statusRankSql('l.status')}
                THEN ${NEW_STATUS} ELSE l.status END,
  last_event = CASE WHEN ${statusRankSql(`COALESCE(${NEW_STATUS}, l.status)`)} >= ${statusRankSql('l.status')}
                    THEN $3 ELSE l.last_event END,
  failure_reason = CASE WHEN ${statusRankSql(`COALESCE(${NEW_STATUS}, l.status)`)} >= ${statusRankSql('l.status')}
                        THEN u.reason ELSE l.failure_reason END,
  message_id = CASE WHEN $3 = 'MAIL_DELIVERED' AND $4 <> '' THEN $4 ELSE l.message_id END,
  delivered_at = CASE WHEN $3 = 'MAIL_DELIVERED' THEN COALESCE(l.delivered_at, $5::timestamptz) ELSE l.delivered_at END,
  attempts = GREATEST(l.attempts, $6::integer),
  subject = COALESCE($7::text, l.subject),
  updated_at = now()
FROM unnest($1::text[], $8::text[]) AS u(id, reason)
WHERE l.id = u.id`;

/**
 * Writes the planned events; returns the events actually recorded (not already present), which
 * the relay will publish.
 */
export async function recordEvents(
  tx: Queryable,
  ctx: EventContext,
  planned: PlannedEvent[],
): Promise<EmailEvent[]> {
  const recorded: EmailEvent[] = [];
  for (const p of planned) {
    if (p.recipients.length === 0) continue;
    const logIds = p.recipients.map((r) => r.logId);
    if (p.moveRows) {
      await tx.query('UPDATE email_logs SET copy_id = $2, updated_at = now() WHERE id = ANY($1::text[])', [
        logIds,
        p.copyId,
      ]);
    }
    const eventAt = new Date().toISOString();
    const event = buildEmailEvent(ctx, p, eventAt);
    const inserted = await tx.query(
      `INSERT INTO email_events (tenant_id, ref_id, copy_id, event, attempt, event_at, payload)
       VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb)
       ON CONFLICT (copy_id, event, attempt) DO NOTHING RETURNING id`,
      [ctx.tenantId, ctx.refId, p.copyId, p.event, ctx.attempt, eventAt, JSON.stringify(event)],
    );
    if (inserted.rowCount === 0) continue;
    const countsAsAttempt = p.event === 'MAIL_DELIVERED' || p.event === 'SMTP_ERROR';
    await tx.query(UPDATE_LOGS, [
      logIds,
      statusForEvent(p.event, p.send?.retryScheduled),
      p.event,
      p.messageId,
      eventAt,
      countsAsAttempt ? ctx.attempt : 0,
      p.subject ?? null,
      p.recipients.map((r) => r.failureReason),
    ]);
    await enqueueOutbox(
      tx,
      Exchange.events,
      RoutingKey.emailEvent(p.event),
      envelope(EMAIL_EVENT_MESSAGE, event, { version: EMAIL_EVENT_MESSAGE_VERSION, tenantId: ctx.tenantId }),
    );
    recorded.push(event);
  }
  return recorded;
}
