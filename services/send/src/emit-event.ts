/**
 * Records the events of attempts, each event as:
 * 1. an `email_events` row, unique on (copy_id, event, attempt): ON CONFLICT DO NOTHING makes a
 *    redelivered command harmless; an event that already existed is neither applied nor
 *    published again;
 * 2. the recipients' `email_logs` rows: status only ever moves to a higher rank
 *    (statusRankSql from libs/contracts), last_event/failure_reason follow unless the status
 *    would move backwards, message_id and delivered_at on delivery, attempts = highest attempt;
 * 3. an outbox row: the spec event object on Exchange.events, routing key
 *    RoutingKey.emailEvent(event), published by the service's OutboxRelay.
 *
 * All three for any number of events are ONE SQL statement (data-modifying CTEs), and the
 * EventWriter groups the events of concurrent handlers into one such statement (group commit):
 * the database work per message stays small at high rates.
 *
 * Single winner: the statement runs in a transaction that first locks the recipients' log rows
 * (libs/store lockUnfinishedLogRows) and keeps, in every event, only the recipients without a
 * send outcome yet (`email_logs.send_outcome`, migration 0006, set by the terminal event in the
 * same statement); an event left without recipients is dropped. A recipient therefore leaves
 * QUEUED exactly once: when a redelivered command makes two processes deliver the same copy at the same
 * time, the first to commit records the outcome and the other records nothing (its events are
 * not published and it schedules no retry).
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
  isTerminalSendEvent,
  statusForEvent,
  statusRankSql,
} from '@mailyard/contracts';
import { type Db, type Queryable, envelope } from '@mailyard/platform';
import { lockUnfinishedLogRows } from '@mailyard/store';
import { Batcher } from './batcher';

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
  send?: { attempt: number; maxAttempts: number; retryScheduled: boolean };
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

const rank = statusRankSql;
const SQL = `
WITH input AS (
  SELECT * FROM unnest($1::int[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int[], $7::timestamptz[],
                       $8::jsonb[], $9::text[], $10::jsonb[], $11::text[], $12::text[], $13::int[], $14::text[],
                       $18::boolean[])
    AS t(k, tenant_id, ref_id, copy_id, event, attempt, event_at, payload, routing_key, message,
         new_status, message_id, counted_attempt, move_to, terminal)
),
ev AS (
  INSERT INTO email_events (tenant_id, ref_id, copy_id, event, attempt, event_at, payload)
  SELECT tenant_id, ref_id, copy_id, event, attempt, event_at, payload FROM input ORDER BY k
  ON CONFLICT (copy_id, event, attempt) DO NOTHING
  RETURNING copy_id, event, attempt
),
fresh AS (
  SELECT DISTINCT ON (i.copy_id, i.event, i.attempt) i.* FROM input i JOIN ev USING (copy_id, event, attempt)
),
logs AS (
  UPDATE email_logs l SET
    status = CASE WHEN f.new_status IS NOT NULL AND ${rank('f.new_status')} > ${rank('l.status')}
                  THEN f.new_status ELSE l.status END,
    last_event = CASE WHEN ${rank('COALESCE(f.new_status, l.status)')} >= ${rank('l.status')}
                      THEN f.event ELSE l.last_event END,
    failure_reason = CASE WHEN ${rank('COALESCE(f.new_status, l.status)')} >= ${rank('l.status')}
                          THEN r.reason ELSE l.failure_reason END,
    message_id = CASE WHEN f.event = 'MAIL_DELIVERED' AND f.message_id <> '' THEN f.message_id ELSE l.message_id END,
    delivered_at = CASE WHEN f.event = 'MAIL_DELIVERED' THEN COALESCE(l.delivered_at, f.event_at) ELSE l.delivered_at END,
    attempts = GREATEST(l.attempts, f.counted_attempt),
    copy_id = COALESCE(f.move_to, l.copy_id),
    send_outcome = CASE WHEN f.terminal THEN f.event ELSE l.send_outcome END,
    updated_at = now()
  FROM unnest($15::int[], $16::text[], $17::text[]) AS r(k, log_id, reason)
  JOIN fresh f ON f.k = r.k
  WHERE l.id = r.log_id
  RETURNING l.id
),
ob AS (
  -- The transactional outbox row (see libs/platform enqueueOutbox), written in this statement.
  INSERT INTO outbox (exchange, routing_key, message)
  SELECT '${Exchange.events}', routing_key, message FROM fresh ORDER BY k
  RETURNING id
)
SELECT k FROM fresh`;

interface Item {
  ctx: EventContext;
  planned: PlannedEvent;
  event: EmailEvent;
}

/**
 * Writes the planned events of any number of attempts in one transaction (see the module
 * comment: only recipients without a send outcome are recorded); returns the events recorded
 * per attempt.
 */
export function recordEventsBatch(
  db: Db | Queryable,
  batch: Array<{ ctx: EventContext; planned: PlannedEvent[] }>,
): Promise<EmailEvent[][]> {
  const logIds = batch.flatMap((b) => b.planned.flatMap((p) => p.recipients.map((r) => r.logId)));
  if (logIds.length === 0) return Promise.resolve(batch.map(() => []));
  const run = async (tx: Queryable) => {
    const unfinished = await lockUnfinishedLogRows(tx, logIds);
    const winners = batch.map((b) => ({
      ctx: b.ctx,
      planned: b.planned.map((p) => ({
        ...p,
        recipients: p.recipients.filter((r) => unfinished.has(r.logId)),
      })),
    }));
    return writeEvents(tx, winners);
  };
  // A plain Queryable is a caller's transaction already (tests); the service passes the Db.
  return 'transaction' in db ? db.transaction(run) : run(db);
}

/** The statement itself; recipients must be locked by the caller's transaction. */
async function writeEvents(
  db: Queryable,
  batch: Array<{ ctx: EventContext; planned: PlannedEvent[] }>,
): Promise<EmailEvent[][]> {
  const items: Array<Item & { owner: number }> = [];
  batch.forEach((b, owner) => {
    for (const p of b.planned) {
      if (p.recipients.length === 0) continue;
      items.push({
        owner,
        ctx: b.ctx,
        planned: p,
        event: buildEmailEvent(b.ctx, p, new Date().toISOString()),
      });
    }
  });
  const out: EmailEvent[][] = batch.map(() => []);
  if (items.length === 0) return out;
  const col = <T>(f: (item: Item) => T) => items.map(f);
  const recipients = items.flatMap((item, k) => item.planned.recipients.map((r) => ({ k, r })));
  const { rows } = await db.query<{ k: number }>(SQL, [
    items.map((_, k) => k),
    col((i) => i.ctx.tenantId),
    col((i) => i.ctx.refId),
    col((i) => i.planned.copyId),
    col((i) => i.planned.event),
    col((i) => i.ctx.attempt),
    col((i) => i.event.details.event_at),
    col((i) => JSON.stringify(i.event)),
    col((i) => RoutingKey.emailEvent(i.planned.event)),
    col((i) =>
      JSON.stringify(
        envelope(EMAIL_EVENT_MESSAGE, i.event, {
          version: EMAIL_EVENT_MESSAGE_VERSION,
          tenantId: i.ctx.tenantId,
          parentTraceparent: i.ctx.traceparent,
        }),
      ),
    ),
    col((i) => statusForEvent(i.planned.event, i.planned.send?.retryScheduled)),
    col((i) => i.planned.messageId),
    col((i) =>
      i.planned.event === 'MAIL_DELIVERED' || i.planned.event === 'SMTP_ERROR' ? i.ctx.attempt : 0,
    ),
    col((i) => (i.planned.moveRows ? i.planned.copyId : null)),
    recipients.map((x) => x.k),
    recipients.map((x) => x.r.logId),
    recipients.map((x) => x.r.failureReason),
    col((i) => isTerminalSendEvent(i.planned.event, i.planned.send?.retryScheduled)),
  ]);
  for (const { k } of rows) {
    const item = items[k]!;
    out[item.owner]!.push(item.event);
  }
  return out;
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
 * next statement (at most `maxBatch` attempts each). A failed statement fails every attempt in
 * it; nothing of them was recorded and their commands are redelivered.
 */
export class EventWriter {
  private readonly batcher: Batcher<{ ctx: EventContext; planned: PlannedEvent[] }, EmailEvent[]>;

  constructor(db: Db, maxBatch = 200) {
    this.batcher = new Batcher((items) => recordEventsBatch(db, items), maxBatch);
  }

  write(ctx: EventContext, planned: PlannedEvent[]): Promise<EmailEvent[]> {
    return this.batcher.submit({ ctx, planned });
  }
}
