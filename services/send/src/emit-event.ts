/**
 * Records the events of attempts through libs/store recordEmailEventBatch, the single writer of
 * email events (event row, email_logs status with the never-backwards ranking, send outcome,
 * outbox row; single winner per recipient; unique event_at per ref_id + event). What stays here
 * is the send service's own part:
 * - turning an attempt's planned outcomes into spec event objects (docs/events.md "The event object"),
 * - suppressing the recipients of a final SMTP_ERROR whose category is a permanent
 *   `invalid_recipient` (docs/deliverability.md "Bounce categories"), in the same transaction, and
 * - group commit: the EventWriter writes the events of attempts that finish while a write is in
 *   flight together, in one transaction, so the database work per message stays small at high
 *   rates.
 */
import {
  type BounceCategory,
  type EmailEvent,
  type EmailEventType,
  SUCCESS_EMAIL_EVENTS,
  emptyTracking,
} from '@mailyard/contracts';
import { Batcher, type Db, type Queryable } from '@mailyard/platform';
import {
  type EmailEventRecord,
  type RecordOptions,
  SuppressionReason,
  recordEmailEventBatchIn,
  suppressions,
} from '@mailyard/store';

export interface EventRecipient {
  logId: string;
  email: string;
  /** This recipient's own failure text for its log row ('' on success). */
  failureReason: string;
}

export interface PlannedEvent {
  event: EmailEventType;
  /** The command's copy (a copy's identity never changes). */
  copyId: string;
  recipients: EventRecipient[];
  failedReason: string;
  providerError?: string;
  messageId: string;
  /** The provider's thread (Gmail thread id, Graph conversationId); '' when not applicable. */
  threadId?: string;
  send?: { attempt: number; maxAttempts: number; retryScheduled: boolean };
  /** SMTP_ERROR: why the recipients' mail failed (`details.bounce_category`); absent: not a bounce. */
  bounceCategory?: BounceCategory;
  /**
   * A final SMTP_ERROR of a permanent invalid_recipient failure: its recipients are suppressed
   * (`hard_bounce`, the send's ref_id) in the transaction that records it.
   */
  suppressRecipients?: boolean;
}

export interface EventContext {
  tenantId: string;
  refId: string;
  mailerId: string;
  customArgs: Record<string, unknown> | null;
  attempt: number;
  /** The command's trace; events written in a shared batch still continue their own trace. */
  traceparent?: string;
}

/** The event object (docs/events.md "The event object"); webhook_id is filled by the dispatcher. */
export function buildEmailEvent(ctx: EventContext, p: PlannedEvent, eventAt: string): EmailEvent {
  const details: EmailEvent['details'] = {
    ref_id: ctx.refId,
    mailer_id: ctx.mailerId,
    email: p.recipients.map((r) => r.email),
    custom_args: ctx.customArgs ?? null,
    message_id: p.messageId,
    thread_id: p.threadId ?? '',
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
  if (p.bounceCategory) details.bounce_category = p.bounceCategory;
  return { event: p.event, success: SUCCESS_EMAIL_EVENTS.includes(p.event), details };
}

type Batch = Array<{ ctx: EventContext; planned: PlannedEvent[] }>;

/**
 * Writes the planned events of any number of attempts in one transaction (a plain Queryable is
 * a caller's transaction already: tests); returns the events recorded per attempt.
 */
export async function recordEventsBatch(
  db: Db | Queryable,
  batch: Batch,
  opts: RecordOptions = {},
): Promise<EmailEvent[][]> {
  const owners: number[] = [];
  const records: EmailEventRecord[] = [];
  const suppressing: boolean[] = [];
  const now = new Date().toISOString();
  batch.forEach((b, owner) => {
    for (const p of b.planned) {
      if (p.recipients.length === 0) continue;
      owners.push(owner);
      suppressing.push(p.suppressRecipients === true);
      records.push({
        tenantId: b.ctx.tenantId,
        copyId: p.copyId,
        recipients: p.recipients,
        event: buildEmailEvent(b.ctx, p, now),
        attempt: b.ctx.attempt,
        traceparent: b.ctx.traceparent,
      });
    }
  });
  const out: EmailEvent[][] = batch.map(() => []);
  if (records.length === 0) return out;
  const write = (tx: Queryable) => recordAndSuppress(tx, records, suppressing, opts);
  const recorded = 'transaction' in db ? await db.transaction(write) : await write(db);
  recorded.forEach((e, i) => {
    if (e) out[owners[i]!]!.push(e);
  });
  return out;
}

/**
 * The events, and in the same transaction the suppressions their final invalid_recipient
 * failures call for: only the recipients an event actually recorded (a redelivered attempt
 * records nothing and suppresses nothing again; an address already suppressed keeps its entry).
 */
async function recordAndSuppress(
  tx: Queryable,
  records: EmailEventRecord[],
  suppressing: boolean[],
  opts: RecordOptions,
): Promise<Array<EmailEvent | null>> {
  const recorded = await recordEmailEventBatchIn(tx, records, opts);
  for (const [i, e] of recorded.entries()) {
    if (!e || !suppressing[i]) continue;
    for (const email of e.details.email)
      await suppressions.add(tx, records[i]!.tenantId, email, SuppressionReason.hardBounce, e.details.ref_id);
  }
  return recorded;
}

/** Records the planned events of one attempt; returns the events actually recorded (not already present). */
export async function recordEvents(
  db: Db | Queryable,
  ctx: EventContext,
  planned: PlannedEvent[],
): Promise<EmailEvent[]> {
  return (await recordEventsBatch(db, [{ ctx, planned }]))[0]!;
}

/**
 * Group commit: attempts that finish while a write is in flight are written together by the
 * next statement (at most `maxBatch` attempts each), their events of one tenant and type in one
 * bus message (up to `opts.eventsPerMessage`, SEND_EVENTS_PER_MESSAGE). A failed statement fails
 * every attempt in it; nothing of them was recorded and their commands are redelivered.
 */
export class EventWriter {
  private readonly batcher: Batcher<{ ctx: EventContext; planned: PlannedEvent[] }, EmailEvent[]>;

  constructor(db: Db, opts: RecordOptions = {}, maxBatch = 200) {
    this.batcher = new Batcher((items) => recordEventsBatch(db, items, opts), maxBatch);
  }

  write(ctx: EventContext, planned: PlannedEvent[]): Promise<EmailEvent[]> {
    return this.batcher.submit({ ctx, planned });
  }
}
