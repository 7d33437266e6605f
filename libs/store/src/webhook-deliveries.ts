import {
  type DeliveriesQuery,
  IdPrefix,
  type WebhookDeliveryStatus,
  type WebhookDeliveryView,
  newId,
} from '@mailyard/contracts';
import type { Queryable } from '@mailyard/platform';
import { type Page, pageAfter, toPage } from './cursor';
import { leaseEndSql, leaseFreeSql } from './lease-sql';
import { SqlFilter } from './sql-filter';

/**
 * Webhook deliveries (services/webhook-dispatcher): one row per HTTP request body and target,
 * every attempt recorded beside it; a replay's row shares its original's body (`body_of`, read
 * by the claim) instead of copying it. The table is the retry schedule: the dispatcher claims due
 * rows (`next_attempt_at <= now()`, not leased, FOR UPDATE SKIP LOCKED), which sets a lease
 * (`leased_until`, a column no index names: the claim is a HOT update, migration 0024), and
 * records the outcome with the next due time and the lease cleared, so a dispatcher that is
 * killed at any moment leaves nothing behind: the row comes due again when its lease ends.
 */

export type DeliveryTargetKind = 'webhook' | 'mailer' | 'inbound';

export interface NewDelivery {
  tenantId: string;
  targetKind: DeliveryTargetKind;
  /** webhooks.id, or the mailer id for a mailer's incoming webhook. */
  webhookId: string;
  eventTypes: string[];
  body: string;
  traceparent?: string;
  /** Extra request headers of this delivery (e.g. X-History-Backfill-Job-Id). */
  extraHeaders?: Record<string, string>;
}

export interface DueDelivery {
  id: string;
  tenantId: string;
  targetKind: DeliveryTargetKind;
  webhookId: string;
  body: string;
  traceparent: string | null;
  extraHeaders: Record<string, string> | null;
  /** Attempts already made before this one. */
  attempts: number;
  createdAt: Date;
  /**
   * The target as configured at claim time, read by the claim statement itself (so every attempt
   * uses the current URL, headers, secret and state): null when it is gone (the webhook deleted,
   * the incoming domain removed, the mailer or its incoming webhook removed).
   */
  target: SealedTarget | null;
}

/** A delivery target as the dispatcher needs it, its headers and signing secret still sealed. */
export interface SealedTarget {
  url: string;
  method: string;
  /** False for a deactivated tenant webhook (the other kinds have no such state). */
  active: boolean;
  /** JSON object of custom headers, sealed; null when there are none. */
  headersSealed: Uint8Array | null;
  /** `whsec_...`, sealed: tenant webhooks only (incoming webhooks are not signed). */
  secretSealed: Uint8Array | null;
}

export interface AttemptOutcome {
  at: Date;
  statusCode: number | null;
  latencyMs: number;
  error: string;
  /** The row after this attempt: delivered, retrying at `nextAttemptAt`, or dropped. */
  next:
    | { status: 'delivered' }
    | { status: 'retrying'; nextAttemptAt: Date }
    | { status: 'dropped'; reason: string };
}

/** Inserts the deliveries in one statement, due at once; returns their ids in order. */
export async function insertDeliveries(db: Queryable, rows: NewDelivery[]): Promise<string[]> {
  if (rows.length === 0) return [];
  const { ids, params } = deliveryParams(rows);
  await db.query(insertDeliveriesSql(1), params);
  return ids;
}

/**
 * The INSERT of deliveries given as eight array parameters from `$first` on (see deliveryParams),
 * for statements that write them together with other rows; `from` names extra FROM items that
 * gate the insert (e.g. a CTE that returns a row only when a state change happened).
 */
export function insertDeliveriesSql(first: number, from = ''): string {
  const p = (i: number) => `$${first + i}::text[]`;
  return `INSERT INTO webhook_deliveries (id, tenant_id, target_kind, webhook_id, event_types, body, traceparent,
       extra_headers, status, next_attempt_at)
     SELECT t.id, t.tenant_id, t.target_kind, t.webhook_id, string_to_array(t.event_types, ','), t.body, t.traceparent,
            t.extra_headers::jsonb, 'pending', now()
       FROM ${from ? `${from}, ` : ''}unnest(${[0, 1, 2, 3, 4, 5, 6, 7].map(p).join(', ')})
         AS t(id, tenant_id, target_kind, webhook_id, event_types, body, traceparent, extra_headers)`;
}

/** New ids for `rows` and the eight array parameters of insertDeliveriesSql. */
export function deliveryParams(rows: NewDelivery[]): { ids: string[]; params: Array<Array<string | null>> } {
  const ids = rows.map(() => newId(IdPrefix.webhookDelivery));
  return {
    ids,
    params: [
      ids,
      rows.map((r) => r.tenantId),
      rows.map((r) => r.targetKind),
      rows.map((r) => r.webhookId),
      rows.map((r) => r.eventTypes.join(',')),
      rows.map((r) => r.body),
      rows.map((r) => r.traceparent ?? null),
      rows.map((r) => (r.extraHeaders ? JSON.stringify(r.extraHeaders) : null)),
    ],
  };
}

type DueRow = {
  id: string;
  tenant_id: string;
  target_kind: DeliveryTargetKind;
  webhook_id: string;
  body: string;
  traceparent: string | null;
  extra_headers: Record<string, string> | null;
  attempts: number;
  created_at: Date;
  t_found: boolean | null;
  t_url: string | null;
  t_method: string | null;
  t_active: boolean | null;
  t_headers_sealed: Uint8Array | null;
  t_secret_sealed: Uint8Array | null;
};

/**
 * Claims up to `limit` due deliveries, at most `perTarget` minus what `running` says is already
 * in flight for each target (endpoint concurrency), oldest due first within a target, skipping
 * rows another dispatcher holds. The targets with work are found by a skip scan over
 * webhook_deliveries_target_due_idx (one index probe per target), so a large backlog for one
 * endpoint costs no more than its own few rows. A claim is a lease of `leaseMs`: unless an
 * outcome is recorded by then, the row is due again. Each row comes back with its target as
 * configured now (`target`: the tenant webhook, incoming domain or mailer's incoming webhook),
 * read by the same statement: no query per target. The claimed rows are updated by their ids as an
 * array (primary key probes): joined to the CTE, the planner's guess of `limit` rows made a hash
 * join over a sequential scan of the whole table (every delivered row) cheaper until ~15k rows.
 */
export async function claimDueDeliveries(
  db: Queryable,
  opts: { limit: number; leaseMs: number; perTarget: number; running: ReadonlyMap<string, number> },
): Promise<DueDelivery[]> {
  const busy = [...opts.running].filter(([, n]) => n > 0);
  const { rows } = await db.query<DueRow>(
    `WITH RECURSIVE targets(webhook_id) AS (
       (SELECT webhook_id FROM webhook_deliveries WHERE status IN ('pending', 'retrying')
         ORDER BY webhook_id LIMIT 1)
       UNION ALL
       SELECT (SELECT w.webhook_id FROM webhook_deliveries w
                WHERE w.status IN ('pending', 'retrying') AND w.webhook_id > t.webhook_id
                ORDER BY w.webhook_id LIMIT 1)
         FROM targets t WHERE t.webhook_id IS NOT NULL
     ), picked AS (
       SELECT due.id FROM targets t
         LEFT JOIN unnest($3::text[], $4::int[]) AS busy(webhook_id, running) ON busy.webhook_id = t.webhook_id
         CROSS JOIN LATERAL (
           SELECT d.id FROM webhook_deliveries d
            WHERE d.webhook_id = t.webhook_id AND d.status IN ('pending', 'retrying') AND d.next_attempt_at <= now()
              AND ${leaseFreeSql('d.leased_until')}
            ORDER BY d.next_attempt_at
            LIMIT GREATEST(0, $5::int - COALESCE(busy.running, 0))
            FOR UPDATE SKIP LOCKED) due
        WHERE t.webhook_id IS NOT NULL
        LIMIT $1
     ), claimed AS (
       UPDATE webhook_deliveries d SET leased_until = ${leaseEndSql('$2')}
        WHERE d.id = ANY(ARRAY(SELECT id FROM picked))
       RETURNING d.id, d.tenant_id, d.target_kind, d.webhook_id, d.body, d.body_of, d.traceparent, d.extra_headers,
         d.attempts, d.created_at
     )
     SELECT c.id, c.tenant_id, c.target_kind, c.webhook_id, COALESCE(c.body, src.body) AS body, c.traceparent,
            c.extra_headers, c.attempts, c.created_at, t.*
       FROM claimed c
       LEFT JOIN webhook_deliveries src ON src.id = c.body_of
       LEFT JOIN LATERAL (
         SELECT true AS t_found, w.url AS t_url, w.method AS t_method, w.active AS t_active,
                w.headers_sealed AS t_headers_sealed, w.secret_sealed AS t_secret_sealed
           FROM webhooks w WHERE c.target_kind = 'webhook' AND w.tenant_id = c.tenant_id AND w.id = c.webhook_id
         UNION ALL
         SELECT true, i.url, i.method, true, i.headers_sealed, NULL
           FROM inbound_domains i
          WHERE c.target_kind = 'inbound' AND i.tenant_id = c.tenant_id AND i.domain = c.webhook_id
         UNION ALL
         SELECT true, m.incoming_webhook->>'url', m.incoming_webhook->>'method', true, m.incoming_webhook_secret, NULL
           FROM mailers m
          WHERE c.target_kind = 'mailer' AND m.tenant_id = c.tenant_id AND m.id = c.webhook_id
            AND m.deleted_at IS NULL AND m.incoming_webhook IS NOT NULL
       ) t ON true`,
    [opts.limit, opts.leaseMs, busy.map(([id]) => id), busy.map(([, n]) => n), opts.perTarget],
  );
  return rows.map((r) => ({
    id: r.id,
    tenantId: r.tenant_id,
    targetKind: r.target_kind,
    webhookId: r.webhook_id,
    body: r.body,
    traceparent: r.traceparent,
    extraHeaders: r.extra_headers,
    attempts: Number(r.attempts),
    createdAt: r.created_at,
    target: r.t_found
      ? {
          url: r.t_url!,
          method: r.t_method!,
          active: r.t_active!,
          headersSealed: r.t_headers_sealed,
          secretSealed: r.t_secret_sealed,
        }
      : null,
  }));
}

export interface AttemptRecord {
  deliveryId: string;
  /** 1-based. */
  attempt: number;
  outcome: AttemptOutcome;
}

/**
 * Records attempts and each row's next state, any number in one statement (the dispatcher
 * writes the outcomes of concurrent attempts together). An attempt recorded twice (a lease that
 * ran out while the first dispatcher was still at it) keeps the first record. The rows are found
 * by primary-key probes (`d.id = ANY($1)`): joined to the unnest alone, the planner hash-joined a
 * sequential scan of every delivery row (about 1,000 blocks per statement at 8,000 rows).
 */
export async function recordDeliveryAttempts(
  db: Queryable,
  records: readonly AttemptRecord[],
): Promise<void> {
  if (records.length === 0) return;
  await db.query(
    `WITH r AS (
       SELECT * FROM unnest($1::text[], $2::int[], $3::timestamptz[], $4::int[], $5::int[], $6::text[], $7::text[],
                            $8::timestamptz[], $9::text[])
         AS r(delivery_id, attempt, at, status_code, latency_ms, error, status, next_at, reason)
     ), a AS (
       INSERT INTO webhook_delivery_attempts (delivery_id, attempt, at, status_code, latency_ms, error)
       SELECT delivery_id, attempt, at, status_code, latency_ms, error FROM r ON CONFLICT DO NOTHING
     )
     UPDATE webhook_deliveries d SET status = r.status, attempts = GREATEST(d.attempts, r.attempt),
       next_attempt_at = r.next_at, leased_until = NULL, dropped_reason = r.reason, updated_at = now()
       FROM r WHERE d.id = ANY($1::text[]) AND d.id = r.delivery_id AND d.status <> 'delivered'`,
    [
      records.map((r) => r.deliveryId),
      records.map((r) => r.attempt),
      records.map((r) => r.outcome.at),
      records.map((r) => r.outcome.statusCode),
      records.map((r) => Math.round(r.outcome.latencyMs)),
      records.map((r) => r.outcome.error.slice(0, 1000)),
      records.map((r) => r.outcome.next.status),
      records.map((r) => (r.outcome.next.status === 'retrying' ? r.outcome.next.nextAttemptAt : null)),
      records.map((r) => (r.outcome.next.status === 'dropped' ? r.outcome.next.reason : '')),
    ],
  );
}

/** Makes claimed deliveries due again now (claimed but not started: endpoint at its limit). */
export async function releaseClaimedDeliveries(db: Queryable, deliveryIds: readonly string[]): Promise<void> {
  if (deliveryIds.length === 0) return;
  await db.query('UPDATE webhook_deliveries SET leased_until = NULL WHERE id = ANY($1::text[])', [
    [...deliveryIds],
  ]);
}

/** Drops a delivery without an attempt (its webhook was deleted or deactivated meanwhile). */
export async function dropDelivery(db: Queryable, deliveryId: string, reason: string): Promise<void> {
  await db.query(
    `UPDATE webhook_deliveries SET status = 'dropped', next_attempt_at = NULL, leased_until = NULL, dropped_reason = $2,
       updated_at = now()
      WHERE id = $1 AND status IN ('pending', 'retrying')`,
    [deliveryId, reason],
  );
}

type ViewRow = {
  id: string;
  webhook_id: string;
  event_types: string[];
  status: WebhookDeliveryStatus;
  next_attempt_at: Date | null;
  dropped_reason: string;
  replay_of: string | null;
  created_at: Date;
  updated_at: Date;
  attempt_list: Array<{
    attempt: number;
    at: string;
    status_code: number | null;
    latency_ms: number;
    error: string;
  }> | null;
};

const VIEW_SELECT = `SELECT d.id, d.webhook_id, d.event_types, d.status, d.next_attempt_at, d.dropped_reason,
    d.replay_of, d.created_at, d.updated_at,
    (SELECT json_agg(json_build_object('attempt', a.attempt, 'at', a.at, 'status_code', a.status_code,
              'latency_ms', a.latency_ms, 'error', a.error) ORDER BY a.attempt)
       FROM webhook_delivery_attempts a WHERE a.delivery_id = d.id) AS attempt_list
  FROM webhook_deliveries d`;

const toView = (r: ViewRow): WebhookDeliveryView => ({
  delivery_id: r.id,
  webhook_id: r.webhook_id,
  event_types: r.event_types,
  status: r.status,
  attempts: (r.attempt_list ?? []).map((a) => ({
    attempt: a.attempt,
    at: new Date(a.at).toISOString(),
    status_code: a.status_code,
    latency_ms: a.latency_ms,
    error: a.error,
  })),
  // Shown only while waiting (a claimed row keeps its due time; its lease is leased_until).
  next_attempt_at:
    r.status === 'pending' || r.status === 'retrying' ? (r.next_attempt_at?.toISOString() ?? null) : null,
  dropped_reason: r.dropped_reason,
  replay_of: r.replay_of,
  created_at: r.created_at.toISOString(),
  updated_at: r.updated_at.toISOString(),
});

export const webhookDeliveries = {
  /** Newest first (ids are ULIDs), filtered; totalCount counts every matching row. */
  async list(
    db: Queryable,
    tenantId: string,
    q: DeliveriesQuery,
  ): Promise<Page<WebhookDeliveryView> & { totalCount: number }> {
    const after = pageAfter(q.pageToken);
    const f = new SqlFilter('d.tenant_id', tenantId);
    const { params } = f;
    if (q.event) f.add(q.event, (p) => `${p} = ANY(d.event_types)`);
    if (q.status) f.add(q.status, (p) => `d.status = ${p}`);
    f.timeRange('d.created_at', q.startDate, q.endDate);
    const filters = f.sql;
    const countParams = [...params];
    if (after !== null) f.add(after, (p) => `d.id < ${p}`);
    params.push(q.pageSize + 1);
    const { rows } = await db.query<ViewRow>(
      `${VIEW_SELECT} WHERE ${f.sql} ORDER BY d.id DESC LIMIT $${params.length}`,
      params,
    );
    const count = await db.query<{ n: string | number }>(
      `SELECT count(*) AS n FROM webhook_deliveries d WHERE ${filters}`,
      countParams,
    );
    return {
      ...toPage(rows.map(toView), q.pageSize, (v) => v.delivery_id),
      totalCount: Number(count.rows[0]?.n ?? 0),
    };
  },

  async get(db: Queryable, tenantId: string, id: string): Promise<WebhookDeliveryView | null> {
    const { rows } = await db.query<ViewRow>(`${VIEW_SELECT} WHERE d.tenant_id = $1 AND d.id = $2`, [
      tenantId,
      id,
    ]);
    return rows[0] ? toView(rows[0]) : null;
  },

  /**
   * The target of a delivery (for replay checks) and `bodyOf`, the delivery holding its body (its
   * own id, or the original a replay shares it with); null when not this tenant's.
   */
  async target(
    db: Queryable,
    tenantId: string,
    id: string,
  ): Promise<{ targetKind: DeliveryTargetKind; webhookId: string; bodyOf: string } | null> {
    const { rows } = await db.query<{ target_kind: DeliveryTargetKind; webhook_id: string; body_of: string }>(
      `SELECT target_kind, webhook_id, COALESCE(body_of, id) AS body_of FROM webhook_deliveries
        WHERE tenant_id = $1 AND id = $2`,
      [tenantId, id],
    );
    const r = rows[0];
    return r ? { targetKind: r.target_kind, webhookId: r.webhook_id, bodyOf: r.body_of } : null;
  },

  /**
   * A new delivery with the same body and target, due at once (`replay_of` names the original);
   * null when the original is not this tenant's. The body is not copied: the replay names the
   * delivery that holds it (`body_of`, the first of a chain of replays), so replays cost a small
   * row each whatever the body's size (migration 0026).
   */
  async replay(db: Queryable, tenantId: string, id: string): Promise<string | null> {
    const newIdValue = newId(IdPrefix.webhookDelivery);
    const { rows } = await db.query<{ id: string }>(
      `INSERT INTO webhook_deliveries (id, tenant_id, target_kind, webhook_id, event_types, body, body_of, traceparent,
         status, next_attempt_at, replay_of)
       SELECT $3, tenant_id, target_kind, webhook_id, event_types, NULL, COALESCE(body_of, id), traceparent, 'pending',
              now(), id
         FROM webhook_deliveries WHERE tenant_id = $1 AND id = $2
       RETURNING id`,
      [tenantId, id, newIdValue],
    );
    return rows[0]?.id ?? null;
  },
};
