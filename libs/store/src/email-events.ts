/**
 * Records email events: for each event, in ONE transaction,
 * 1. an `email_events` row,
 * 2. the recipients' `email_logs` rows advanced: status only ever moves to a higher rank
 *    (statusRankSql from libs/contracts); last_event/failure_reason follow unless the status
 *    would move backwards,
 * 3. an outbox row publishing the spec event object on Exchange.events with routing key
 *    RoutingKey.emailEvent(event) (the service's OutboxRelay publishes it).
 *
 * Meant to become the single writer of email events: today the tracking service (opens, clicks,
 * unsubscribes) uses it; services/send/src/emit-event.ts still writes its own events with the
 * same three writes and will move here in a later change.
 *
 * Stamps (SPEC events rule 3, DESIGN.md Reliability 2): `details.event_at` is assigned here, with
 * microsecond precision, strictly after every earlier event of the same (ref_id, event): a
 * transaction-scoped advisory lock per (ref_id, event) serializes writers across processes, so
 * ref_id + event + event_at is unique even for two opens in the same millisecond.
 *
 * Repeated events: every open and every click is its own event with its own event_at (as
 * SendGrid and Postmark report them); the log status only moves forward. email_events keeps its
 * unique key (copy_id, event, attempt), which the send service relies on: events recorded here
 * use NEGATIVE attempt numbers, -1 for the copy's first event of that type, -2 for the second,
 * and so on, so they never collide with send attempts (>= 1) and the send consumer, which looks
 * events up by attempt, never mistakes them for an attempt of its own.
 */
import {
  EMAIL_EVENT_MESSAGE,
  EMAIL_EVENT_MESSAGE_VERSION,
  type EmailEvent,
  Exchange,
  RoutingKey,
  statusForEvent,
  statusRankSql,
} from '@mailyard/contracts';
import { type Db, type Queryable, envelope } from '@mailyard/platform';

export interface EmailEventRecord {
  tenantId: string;
  /** The copy the event is recorded under (email_logs.copy_id of its recipients). */
  copyId: string;
  /** The email_logs rows (of this tenant) the event moves forward. */
  logIds: string[];
  /** The spec event object; `details.event_at` is replaced by the stamp assigned here. */
  event: EmailEvent;
  /** Trace the outbox message continues. */
  traceparent?: string;
}

const rank = statusRankSql;
const SQL = `
WITH input AS (
  SELECT * FROM unnest($1::int[], $2::text[], $3::text[], $4::text[], $5::text[], $6::jsonb[], $7::text[],
                       $8::jsonb[], $9::text[])
    AS t(k, tenant_id, ref_id, copy_id, event, payload, routing_key, message, new_status)
),
clock AS (SELECT date_trunc('microseconds', clock_timestamp()) AS now),
prev AS (
  SELECT i.k,
         (SELECT max(e.event_at) FROM email_events e
           WHERE e.tenant_id = i.tenant_id AND e.ref_id = i.ref_id AND e.event = i.event) AS last_at,
         (SELECT min(e.attempt) FROM email_events e
           WHERE e.copy_id = i.copy_id AND e.event = i.event AND e.attempt < 0) AS last_attempt
    FROM input i
),
stamped AS (
  SELECT i.*,
         GREATEST(c.now, p.last_at + interval '1 microsecond')
           + (row_number() OVER (PARTITION BY i.tenant_id, i.ref_id, i.event ORDER BY i.k) - 1) * interval '1 microsecond'
           AS event_at,
         COALESCE(p.last_attempt, 0) - row_number() OVER (PARTITION BY i.copy_id, i.event ORDER BY i.k) AS attempt
    FROM input i JOIN prev p USING (k) CROSS JOIN clock c
),
final AS (
  SELECT s.*, to_char(s.event_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS stamp FROM stamped s
),
ev AS (
  INSERT INTO email_events (tenant_id, ref_id, copy_id, event, attempt, event_at, payload)
  SELECT tenant_id, ref_id, copy_id, event, attempt::int, event_at,
         jsonb_set(payload, '{details,event_at}', to_jsonb(stamp))
    FROM final ORDER BY k
  ON CONFLICT (copy_id, event, attempt) DO NOTHING
  RETURNING copy_id, event, attempt, payload
),
fresh AS (
  SELECT f.k, f.tenant_id, f.event, f.new_status, f.routing_key, f.message, f.stamp, ev.payload AS recorded,
         f.payload->'details'->>'failed_reason' AS reason
    FROM final f JOIN ev ON ev.copy_id = f.copy_id AND ev.event = f.event AND ev.attempt = f.attempt
),
logs AS (
  UPDATE email_logs l SET
    status = CASE WHEN f.new_status IS NOT NULL AND ${rank('f.new_status')} > ${rank('l.status')}
                  THEN f.new_status ELSE l.status END,
    last_event = CASE WHEN ${rank('COALESCE(f.new_status, l.status)')} >= ${rank('l.status')}
                      THEN f.event ELSE l.last_event END,
    failure_reason = CASE WHEN ${rank('COALESCE(f.new_status, l.status)')} >= ${rank('l.status')}
                          THEN COALESCE(f.reason, '') ELSE l.failure_reason END,
    updated_at = now()
  FROM unnest($10::int[], $11::text[]) AS r(k, log_id)
  JOIN fresh f ON f.k = r.k
  WHERE l.id = r.log_id AND l.tenant_id = f.tenant_id
  RETURNING l.id
),
ob AS (
  INSERT INTO outbox (exchange, routing_key, message)
  SELECT '${Exchange.events}', routing_key, jsonb_set(message, '{payload,details,event_at}', to_jsonb(stamp))
    FROM fresh ORDER BY k
  RETURNING id
)
SELECT k, recorded FROM fresh ORDER BY k`;

/**
 * Records `records` inside the caller's transaction `tx` (use it to commit other writes with the
 * events, e.g. a suppression); returns the events as recorded, stamped, in input order.
 */
export async function recordEmailEventsIn(tx: Queryable, records: EmailEventRecord[]): Promise<EmailEvent[]> {
  if (records.length === 0) return [];
  // Lock order is fixed (sorted) so concurrent writers of several keys cannot deadlock.
  const lockKeys = [
    ...new Set(records.map((r) => `${r.tenantId}/${r.event.details.ref_id}/${r.event.event}`)),
  ];
  lockKeys.sort();
  await tx.query('SELECT pg_advisory_xact_lock(hashtextextended(k, 0)) FROM unnest($1::text[]) AS k', [
    lockKeys,
  ]);
  const col = <T>(f: (r: EmailEventRecord) => T) => records.map(f);
  const links = records.flatMap((r, k) => r.logIds.map((logId) => ({ k, logId })));
  const { rows } = await tx.query<{ k: number; recorded: EmailEvent }>(SQL, [
    records.map((_, k) => k),
    col((r) => r.tenantId),
    col((r) => r.event.details.ref_id),
    col((r) => r.copyId),
    col((r) => r.event.event),
    col((r) => JSON.stringify(r.event)),
    col((r) => RoutingKey.emailEvent(r.event.event)),
    col((r) =>
      JSON.stringify(
        envelope(EMAIL_EVENT_MESSAGE, r.event, {
          version: EMAIL_EVENT_MESSAGE_VERSION,
          tenantId: r.tenantId,
          parentTraceparent: r.traceparent,
        }),
      ),
    ),
    col((r) => statusForEvent(r.event.event, r.event.details.retry_scheduled)),
    links.map((l) => l.k),
    links.map((l) => l.logId),
  ]);
  return rows.map((r) => r.recorded);
}

/** Records `records` in a transaction of their own (see recordEmailEventsIn). */
export function recordEmailEvents(db: Db, records: EmailEventRecord[]): Promise<EmailEvent[]> {
  return db.transaction((tx) => recordEmailEventsIn(tx, records));
}

/** What the tracking service needs about the recipient a link names. */
export interface TrackedRecipient {
  logId: string;
  tenantId: string;
  refId: string;
  copyId: string;
  email: string;
  mailerId: string;
  messageId: string;
  customArgs: Record<string, unknown> | null;
}

/** The tenant's email_logs row `logId` of send `refId`, or null (another tenant's reads as absent). */
export async function findTrackedRecipient(
  db: Queryable,
  tenantId: string,
  refId: string,
  logId: string,
): Promise<TrackedRecipient | null> {
  const { rows } = await db.query<{
    id: string;
    copy_id: string;
    recipient: string;
    mailer_id: string;
    message_id: string;
    custom_args: Record<string, unknown> | null;
  }>(
    `SELECT l.id, l.copy_id, l.recipient, l.mailer_id, l.message_id, s.custom_args
       FROM email_logs l JOIN sends s ON s.ref_id = l.ref_id
      WHERE l.id = $1 AND l.tenant_id = $2 AND l.ref_id = $3`,
    [logId, tenantId, refId],
  );
  const r = rows[0];
  if (!r) return null;
  return {
    logId: r.id,
    tenantId,
    refId,
    copyId: r.copy_id,
    email: r.recipient,
    mailerId: r.mailer_id,
    messageId: r.message_id,
    customArgs: r.custom_args,
  };
}
