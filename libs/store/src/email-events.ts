/**
 * The single writer of email events (send service, tracking, later inbound). For each event, in
 * ONE transaction and one statement (data-modifying CTEs):
 * 1. an `email_events` row;
 * 2. the recipients' `email_logs` rows advanced: status only ever moves to a higher rank
 *    (statusRankSql from libs/contracts); last_event/failure_reason follow unless the status
 *    would move backwards; on delivery message_id, thread_id (Gmail/Graph, migration 0029: later
 *    events about the copy carry it) and delivered_at; attempts = highest attempt;
 *    a terminal send event sets `send_outcome`;
 * 3. the outbox row publishing it (libs/contracts BusMessages.emailEvent, validated by
 *    libs/platform outboxMessage; the relay publishes it); with `eventsPerMessage` above 1 the
 *    events of one tenant and event type recorded together share one row
 *    (BusMessages.emailEventGroup, `email.event` version 2): one bus message per group commit
 *    instead of one per event, and only the events actually recorded are in it.
 *
 * Keys (migration 0011): a copy's identity never changes. A SEND event (a record with `attempt`)
 * is unique per (copy_id, event, attempt, recipients): a redelivered command that records the
 * same outcome again writes nothing and publishes nothing. One attempt may therefore record a
 * retry-scheduled SMTP_ERROR for some recipients and a final one for others, under the same
 * copy_id. A REPEATED event (a record without `attempt`: opens, clicks, unsubscribes) is its own
 * event every time (attempt 0, key `<recipient>@<event_at>`), as SendGrid and Postmark report them.
 *
 * Single winner (send events): the transaction first locks the recipients' log rows
 * (lockUnfinishedLogRows, in the same round trip as the advisory locks below) and keeps, in every send event, only the recipients without a send
 * outcome yet; an event left without recipients is dropped. When two processes deliver the same
 * copy at the same time, the first to commit records the outcome and the other records nothing.
 *
 * Stats (migration 0031, docs/operations.md "Stats"): the same statement adds each newly inserted
 * event to the stats rollups (statsCounterOf: per recipient of the event, in the hour of its
 * event_at, under its log row's sending domain, mailer and campaign); a redelivered event inserts
 * no row and so counts nothing. The first open (click) of a recipient copy also counts as
 * `unique_opened` (`unique_clicked`) and sets the log row's `opened` (`clicked`) flag: "first" is
 * read from the flag as the statement's snapshot sees it, which is exact because every writer of
 * a (ref_id, event) holds its advisory lock (below) from before the statement to its commit.
 *
 * Reputation (migration 0037, reputation.ts): the same statement inserts a `reputation_sends` row
 * per recipient of a newly recorded MAIL_DELIVERED or final SMTP_ERROR (one per log row: the
 * window's denominator; a final SMTP_ERROR of an invalid recipient flagged at once) and flags the
 * row of a newly recorded invalid-recipient MAIL_BOUNCE or MAIL_SPAM (inserting it when the copy
 * has none yet, e.g. a provider's bounce with no delivery before it); a redelivered event counts
 * nothing. When a bounce or complaint was counted, the touched scopes are evaluated in the same
 * transaction (evaluatePausesIn): a pause and its SENDING_PAUSED outbox row commit with the event.
 *
 * Stamps (docs/architecture.md, reliability 2): `details.event_at` is assigned here, with
 * microsecond precision, strictly after every earlier event of the same (ref_id, event), and
 * strictly increasing within one batch: a transaction-scoped advisory lock per (ref_id, event)
 * serializes writers across processes, so ref_id + event + event_at is unique per event even
 * for six deliveries of one send written in the same statement. A record with `eventAt` (a
 * provider's own time, e.g. SparkPost's `timestamp`) is stamped at that time instead, moved on by
 * a microsecond past any event of the same (ref_id, event) already stamped within the second
 * from it, and by one microsecond per earlier record of the batch with the same time: still
 * unique, and as the provider reported it.
 */
import {
  type BusEnvelope,
  BusMessages,
  type EmailEvent,
  type ReputationSettings,
  isTerminalSendEvent,
  reputationSignalOf,
  statsCounterOf,
  statusForEvent,
  statusRankSql,
} from '@mailyard/contracts';
import {
  type Db,
  type Queryable,
  childTraceparent,
  currentTrace,
  outboxInsertSelectSql,
  outboxMessage,
} from '@mailyard/platform';
import { lockUnfinishedLogRows } from './email-logs';
import { messageGroups } from './event-message-groups';
import { evaluatePausesIn, reputationSettings } from './reputation';
import { statsRollupUpsertSql } from './stats-rollup-sql';
import {
  TRACKED_RECIPIENT_SELECT,
  type TrackedRecipient,
  type TrackedRecipientRow,
  toTrackedRecipient,
} from './tracked-recipient';

export type { TrackedRecipient } from './tracked-recipient';

export interface EmailEventRecipient {
  /** The email_logs row (of this tenant) the event moves forward. */
  logId: string;
  email: string;
  /** This recipient's own failure text for its log row; default: the event's failed_reason. */
  failureReason?: string;
}

export interface EmailEventRecord {
  tenantId: string;
  /** The copy the event is recorded under (email_logs.copy_id of its recipients). */
  copyId: string;
  recipients: EmailEventRecipient[];
  /**
   * The spec event object; `details.event_at` is replaced by the stamp assigned here, and for a
   * send event `details.email` by the recipients actually recorded.
   */
  event: EmailEvent;
  /** The send attempt this event reports (send service); absent for repeated events. */
  attempt?: number;
  /** Trace the outbox message continues. */
  traceparent?: string;
  /**
   * When the event happened, as reported by its source (a provider callback); absent: now. The
   * stamp is this time or, when it is taken, the next free microsecond (module comment).
   */
  eventAt?: Date;
}

export interface RecordOptions {
  /**
   * Most events in one bus message (default 1: a message per event, version 1). Above 1, the
   * recorded events of one tenant and event type share `email.event` version-2 messages
   * (libs/contracts email-event-message.ts; the send service's SEND_EVENTS_PER_MESSAGE).
   */
  eventsPerMessage?: number;
  /** Pause thresholds (docs/deliverability.md); default: the process's (setReputationSettings). */
  reputation?: ReputationSettings;
}

const rank = statusRankSql;
const counted = (c: string) => `count(*) FILTER (WHERE counter = '${c}') AS ${c}`;
const firsts = (c: string, flag: string) =>
  `count(DISTINCT log_id) FILTER (WHERE counter = '${c}' AND NOT ${flag}) AS unique_${c}`;
/** The rollups of the recorded events (`counted`: one row per event and recipient). */
const STATS = statsRollupUpsertSql(
  `SELECT tenant_id, bucket, domain, mailer_id, campaign_id,
          ${['delivered', 'bounced', 'spam', 'opened', 'clicked', 'unsubscribed', 'failed', 'rejected'].map(counted).join(', ')},
          ${firsts('opened', 'was_opened')}, ${firsts('clicked', 'was_clicked')}
     FROM counted GROUP BY tenant_id, bucket, domain, mailer_id, campaign_id`,
  [
    'delivered',
    'bounced',
    'spam',
    'opened',
    'clicked',
    'unsubscribed',
    'failed',
    'rejected',
    'unique_opened',
    'unique_clicked',
  ],
);
const STAMP = `to_char(s.event_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
const SQL = `
WITH input AS (
  SELECT * FROM unnest($1::int[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int[], $7::text[],
                       $8::boolean[], $9::jsonb[], $10::int[], $11::jsonb[], $12::text[], $13::text[],
                       $14::text[], $15::int[], $16::boolean[], $24::timestamptz[], $25::text[], $26::text[])
    AS t(k, tenant_id, ref_id, copy_id, event, attempt, recipient_key, repeated, payload, grp,
         message, traceparent, new_status, message_id, counted_attempt, terminal, given_at, counter, signal)
),
links AS (
  SELECT * FROM unnest($17::int[], $18::text[], $19::text[]) AS r(k, log_id, reason)
),
prior AS (
  SELECT l.id, l.opened, l.clicked FROM email_logs l WHERE l.id IN (SELECT log_id FROM links)
),
grp AS (
  SELECT * FROM unnest($20::text[], $21::text[], $22::jsonb[], $23::boolean[]) WITH ORDINALITY
    AS g(exchange, routing_key, message, grouped, n)
),
clock AS (SELECT date_trunc('microseconds', clock_timestamp()) AS now),
prev AS (
  SELECT i.k,
         CASE WHEN i.given_at IS NULL THEN
           (SELECT max(e.event_at) FROM email_events e
             WHERE e.tenant_id = i.tenant_id AND e.ref_id = i.ref_id AND e.event = i.event)
         ELSE
           (SELECT max(e.event_at) FROM email_events e
             WHERE e.tenant_id = i.tenant_id AND e.ref_id = i.ref_id AND e.event = i.event
               AND e.event_at >= date_trunc('microseconds', i.given_at)
               AND e.event_at < date_trunc('microseconds', i.given_at) + interval '1 second')
         END AS last_at
    FROM input i
),
stamped AS (
  SELECT i.*,
         CASE WHEN i.given_at IS NULL THEN
           GREATEST(c.now, p.last_at + interval '1 microsecond')
             + (row_number() OVER (PARTITION BY i.tenant_id, i.ref_id, i.event ORDER BY i.k) - 1) * interval '1 microsecond'
         ELSE
           COALESCE(p.last_at + interval '1 microsecond', date_trunc('microseconds', i.given_at))
             + (row_number() OVER (PARTITION BY i.tenant_id, i.ref_id, i.event, i.given_at ORDER BY i.k) - 1)
               * interval '1 microsecond'
         END AS event_at
    FROM input i JOIN prev p USING (k) CROSS JOIN clock c
),
final AS (
  SELECT s.*, ${STAMP} AS stamp,
         CASE WHEN s.repeated THEN s.recipient_key || '@' || ${STAMP} ELSE s.recipient_key END AS ekey
    FROM stamped s
),
ev AS (
  INSERT INTO email_events (tenant_id, ref_id, copy_id, event, attempt, recipient_key, event_at, payload)
  SELECT tenant_id, ref_id, copy_id, event, attempt, ekey, event_at,
         jsonb_set(payload, '{details,event_at}', to_jsonb(stamp))
    FROM final ORDER BY k
  ON CONFLICT (copy_id, event, attempt, recipient_key) DO NOTHING
  RETURNING copy_id, event, attempt, recipient_key
),
fresh AS (
  SELECT DISTINCT ON (f.copy_id, f.event, f.attempt, f.ekey) f.*
    FROM final f JOIN ev ON ev.copy_id = f.copy_id AND ev.event = f.event AND ev.attempt = f.attempt
                        AND ev.recipient_key = f.ekey
   ORDER BY f.copy_id, f.event, f.attempt, f.ekey, f.k
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
    thread_id = CASE WHEN f.event = 'MAIL_DELIVERED' AND f.payload->'details'->>'thread_id' <> ''
                     THEN f.payload->'details'->>'thread_id' ELSE l.thread_id END,
    delivered_at = CASE WHEN f.event = 'MAIL_DELIVERED' THEN COALESCE(l.delivered_at, f.event_at) ELSE l.delivered_at END,
    attempts = GREATEST(l.attempts, f.counted_attempt),
    send_outcome = CASE WHEN f.terminal THEN f.event ELSE l.send_outcome END,
    opened = l.opened OR EXISTS (SELECT 1 FROM links r2 JOIN fresh f2 ON f2.k = r2.k
                                  WHERE r2.log_id = l.id AND f2.counter = 'opened'),
    clicked = l.clicked OR EXISTS (SELECT 1 FROM links r2 JOIN fresh f2 ON f2.k = r2.k
                                    WHERE r2.log_id = l.id AND f2.counter = 'clicked'),
    updated_at = now()
  FROM links r
  JOIN fresh f ON f.k = r.k
  WHERE l.id = r.log_id AND l.tenant_id = f.tenant_id
  RETURNING l.id, l.sending_domain, l.mailer_id, l.campaign_id
),
counted AS (
  SELECT f.tenant_id, date_trunc('hour', f.event_at, 'UTC') AS bucket, u.sending_domain AS domain,
         u.mailer_id, COALESCE(u.campaign_id, '') AS campaign_id, f.counter, r.log_id,
         p.opened AS was_opened, p.clicked AS was_clicked
    FROM links r JOIN fresh f ON f.k = r.k JOIN logs u ON u.id = r.log_id JOIN prior p ON p.id = r.log_id
   WHERE f.counter IS NOT NULL
),
stats AS (
  ${STATS}
),
rep AS (
  INSERT INTO reputation_sends AS s (tenant_id, log_id, domain, mailer_id, invalid_bounce, complaint)
  SELECT f.tenant_id, u.id, min(u.sending_domain), min(u.mailer_id),
         bool_or(f.signal IS NOT DISTINCT FROM 'invalid_bounce'), bool_or(f.signal IS NOT DISTINCT FROM 'complaint')
    FROM links r JOIN fresh f ON f.k = r.k JOIN logs u ON u.id = r.log_id
   WHERE (f.terminal AND f.event IN ('MAIL_DELIVERED', 'SMTP_ERROR')) OR f.signal IS NOT NULL
   GROUP BY f.tenant_id, u.id
   ORDER BY u.id
  ON CONFLICT (log_id) DO UPDATE SET invalid_bounce = s.invalid_bounce OR EXCLUDED.invalid_bounce,
                                     complaint = s.complaint OR EXCLUDED.complaint
),
wire AS (
  SELECT f.grp, min(f.k) AS k0,
         jsonb_agg(CASE WHEN g.grouped
                        THEN jsonb_build_object('event', jsonb_set(f.payload, '{details,event_at}', to_jsonb(f.stamp)),
                                                'traceparent', f.traceparent)
                        ELSE jsonb_set(f.message, '{payload,details,event_at}', to_jsonb(f.stamp)) END
                   ORDER BY f.k) AS items
    FROM fresh f JOIN grp g ON g.n = f.grp + 1
   GROUP BY f.grp
),
ob AS (
  ${outboxInsertSelectSql(
    `SELECT g.exchange, g.routing_key,
            CASE WHEN g.grouped THEN jsonb_set(g.message, '{payload,events}', w.items) ELSE w.items->0 END
       FROM wire w JOIN grp g ON g.n = w.grp + 1 ORDER BY w.k0`,
  )}
)
SELECT k, stamp FROM fresh ORDER BY k`;

const lower = (s: string) => s.toLowerCase();

/** The key part naming a send event's recipients (see the module comment). */
export function recipientKey(emails: readonly string[]): string {
  return [...new Set(emails.map(lower))].sort().join(',');
}

type Item = { index: number; record: EmailEventRecord; event: EmailEvent };

/**
 * The outbox messages of `items` (built and validated by outboxMessage): per item its group, and
 * for an item alone in its group its version-1 envelope; per group of several its version-2
 * envelope with an empty `events` (the statement fills in the items recorded, stamped) and per
 * item the trace its entry continues.
 */
function eventMessages(items: readonly Item[], max: number) {
  const groupOf: number[] = [];
  const single: Array<BusEnvelope | null> = items.map(() => null);
  const traceparent: Array<string | null> = items.map(() => null);
  const keys = items.map((i) => `${i.record.tenantId}\n${i.event.event}`);
  const groups = messageGroups(keys, max).map((members, g) => {
    for (const k of members) groupOf[k] = g;
    const first = items[members[0]!]!;
    const opts = { tenantId: first.record.tenantId, traceparent: first.record.traceparent };
    if (members.length === 1) {
      const row = outboxMessage(BusMessages.emailEvent, first.event, opts);
      single[members[0]!] = row.envelope;
      return { exchange: row.exchange, routingKey: row.routingKey, envelope: null };
    }
    const events = members.map((k) => {
      const i = items[k]!;
      traceparent[k] = childTraceparent(i.record.traceparent ?? currentTrace()?.traceparent);
      return { event: i.event, traceparent: traceparent[k]! };
    });
    const row = outboxMessage(BusMessages.emailEventGroup, { events }, opts);
    const envelope: BusEnvelope = { ...row.envelope, payload: { events: [] } };
    return { exchange: row.exchange, routingKey: row.routingKey, envelope };
  });
  return { groupOf, single, traceparent, groups };
}

/**
 * Records `records` inside the caller's transaction `tx` (use it to commit other writes with the
 * events, e.g. a suppression); returns, per record in input order, the event as recorded
 * (stamped), or null when nothing was recorded (already recorded, or no recipient left
 * without a send outcome).
 */
export async function recordEmailEventBatchIn(
  tx: Queryable,
  records: readonly EmailEventRecord[],
  opts: RecordOptions = {},
): Promise<Array<EmailEvent | null>> {
  const out: Array<EmailEvent | null> = records.map(() => null);
  const sendLogIds = records.flatMap((r) =>
    r.attempt === undefined ? [] : r.recipients.map((x) => x.logId),
  );
  // Lock order is fixed (advisory keys sorted, then log rows by id) so concurrent writers of
  // several keys cannot deadlock; one round trip takes both. A record that turns out to have no
  // recipient left still had its key locked: harmless.
  const lockKeys = [
    ...new Set(
      records
        .filter((r) => r.recipients.length > 0)
        .map((r) => `${r.tenantId}/${r.event.details.ref_id}/${r.event.event}`),
    ),
  ];
  lockKeys.sort();
  const unfinished =
    sendLogIds.length > 0 ? await lockUnfinishedLogRows(tx, sendLogIds, lockKeys) : new Set<string>();
  const items: Item[] = [];
  records.forEach((record, index) => {
    if (record.attempt === undefined) {
      if (record.recipients.length > 0) items.push({ index, record, event: record.event });
      return;
    }
    const recipients = record.recipients.filter((x) => unfinished.has(x.logId));
    if (recipients.length === 0) return;
    const event: EmailEvent = {
      ...record.event,
      details: { ...record.event.details, email: recipients.map((x) => x.email) },
    };
    items.push({ index, record: { ...record, recipients }, event });
  });
  if (items.length === 0) return out;
  if (sendLogIds.length === 0) {
    await tx.query('SELECT pg_advisory_xact_lock(hashtextextended(k, 0)) FROM unnest($1::text[]) AS k', [
      lockKeys,
    ]);
  }

  const messages = eventMessages(items, opts.eventsPerMessage ?? 1);
  const col = <T>(f: (i: (typeof items)[number]) => T) => items.map(f);
  const links = items.flatMap((i, k) =>
    i.record.recipients.map((x) => ({
      k,
      logId: x.logId,
      reason: x.failureReason ?? i.event.details.failed_reason,
    })),
  );
  const signals = col((i) => reputationSignalOf(i.event));
  const { rows } = await tx.query<{ k: number; stamp: string }>(SQL, [
    items.map((_, k) => k),
    col((i) => i.record.tenantId),
    col((i) => i.event.details.ref_id),
    col((i) => i.record.copyId),
    col((i) => i.event.event),
    col((i) => i.record.attempt ?? 0),
    col((i) => recipientKey(i.record.recipients.map((x) => x.email))),
    col((i) => i.record.attempt === undefined),
    col((i) => JSON.stringify(i.event)),
    messages.groupOf,
    messages.single.map((m) => (m ? JSON.stringify(m) : null)),
    messages.traceparent,
    col((i) => statusForEvent(i.event.event, i.event.details.retry_scheduled)),
    col((i) => i.event.details.message_id),
    col((i) =>
      i.record.attempt !== undefined && (i.event.event === 'MAIL_DELIVERED' || i.event.event === 'SMTP_ERROR')
        ? i.record.attempt
        : 0,
    ),
    col(
      (i) =>
        i.record.attempt !== undefined && isTerminalSendEvent(i.event.event, i.event.details.retry_scheduled),
    ),
    links.map((l) => l.k),
    links.map((l) => l.logId),
    links.map((l) => l.reason),
    messages.groups.map((g) => g.exchange),
    messages.groups.map((g) => g.routingKey),
    messages.groups.map((g) => (g.envelope ? JSON.stringify(g.envelope) : null)),
    messages.groups.map((g) => g.envelope !== null),
    col((i) => i.record.eventAt?.toISOString() ?? null),
    col((i) => statsCounterOf(i.event.event, i.event.details.retry_scheduled)),
    signals,
  ]);
  // The row as inserted is the item's event with its stamp (jsonb_set above): rebuilt here rather
  // than read back and parsed.
  for (const { k, stamp } of rows) {
    const { index, event } = items[k]!;
    out[index] = { ...event, details: { ...event.details, event_at: stamp } };
  }
  // Reputation: only a recorded bounce or complaint can tip a scope over (a delivery only adds
  // to the denominator), so the windows are read only then.
  const counted = rows.flatMap(({ k }) =>
    signals[k] ? items[k]!.record.recipients.map((x) => x.logId) : [],
  );
  if (counted.length > 0) await evaluatePausesIn(tx, counted, opts.reputation ?? reputationSettings());
  return out;
}

/** recordEmailEventBatchIn in a transaction of its own. */
export function recordEmailEventBatch(
  db: Db,
  records: readonly EmailEventRecord[],
  opts: RecordOptions = {},
): Promise<Array<EmailEvent | null>> {
  return db.transaction((tx) => recordEmailEventBatchIn(tx, records, opts));
}

/** Records `records` inside `tx`; returns the events actually recorded, stamped, in input order. */
export async function recordEmailEventsIn(
  tx: Queryable,
  records: EmailEventRecord[],
  opts: RecordOptions = {},
): Promise<EmailEvent[]> {
  return (await recordEmailEventBatchIn(tx, records, opts)).filter((e): e is EmailEvent => e !== null);
}

/** Records `records` in a transaction of their own (see recordEmailEventsIn). */
export function recordEmailEvents(db: Db, records: EmailEventRecord[]): Promise<EmailEvent[]> {
  return db.transaction((tx) => recordEmailEventsIn(tx, records));
}

/** The tenant's email_logs row `logId` of send `refId`, or null (another tenant's reads as absent). */
export async function findTrackedRecipient(
  db: Queryable,
  tenantId: string,
  refId: string,
  logId: string,
): Promise<TrackedRecipient | null> {
  const { rows } = await db.query<TrackedRecipientRow>(
    `${TRACKED_RECIPIENT_SELECT} WHERE l.id = $1 AND l.tenant_id = $2 AND l.ref_id = $3`,
    [logId, tenantId, refId],
  );
  return rows[0] ? toTrackedRecipient(rows[0]) : null;
}
