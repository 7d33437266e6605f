import type { WebhookEvent, WebhookEventToggles, WebhookRegistration } from '@mailyard/contracts';
import type { Queryable, Sealer } from '@mailyard/platform';

/**
 * Tenant-level webhooks (docs/api/webhooks.md), scoped to one tenant: another
 * tenant's webhook behaves as absent. One per event type per tenant (unique index): a second
 * register is `exists`. Header values and the signing secret arrive sealed and are only
 * unsealed by `loadTenantWebhooks` for the dispatcher; the API sees header names only.
 */

export interface NewWebhook {
  id: string;
  event: WebhookEvent;
  url: string;
  events: WebhookEventToggles | null;
  headerNames: string[];
  headersSealed: Buffer | null;
  secretSealed: Buffer;
}

export interface WebhookPatch {
  url?: string;
  /** Replaces the stored toggles (EMAIL_EVENT only). */
  events?: WebhookEventToggles;
  /** Replaces the stored headers; empty names with null sealed clears them. */
  headers?: { names: string[]; sealed: Buffer | null };
  active?: boolean;
}

type Row = {
  id: string;
  event: WebhookEvent;
  url: string;
  method: 'POST';
  active: boolean;
  events: WebhookEventToggles | null;
  header_names: string[];
  created_at: Date;
  updated_at: Date;
};

const COLUMNS = 'id, event, url, method, active, events, header_names, created_at, updated_at';

const toRegistration = (r: Row): WebhookRegistration => ({
  webhook_id: r.id,
  event: r.event,
  url: r.url,
  method: r.method,
  active: r.active,
  options: r.events ? { events: r.events } : null,
  headers_present: r.header_names,
  created_at: r.created_at.toISOString(),
  updated_at: r.updated_at.toISOString(),
});

export const webhooks = {
  /** `exists` when the tenant already has a webhook for this event type (rule 4). */
  async create(db: Queryable, tenantId: string, w: NewWebhook): Promise<'created' | 'exists'> {
    const { rows } = await db.query(
      `INSERT INTO webhooks (id, tenant_id, event, url, events, header_names, headers_sealed, secret_sealed)
       VALUES ($1, $2, $3, $4, $5::jsonb, $6::text[], $7, $8)
       ON CONFLICT (tenant_id, event) DO NOTHING RETURNING id`,
      [
        w.id,
        tenantId,
        w.event,
        w.url,
        w.events ? JSON.stringify(w.events) : null,
        w.headerNames,
        w.headersSealed,
        w.secretSealed,
      ],
    );
    return rows.length > 0 ? 'created' : 'exists';
  },

  async get(db: Queryable, tenantId: string, event: WebhookEvent): Promise<WebhookRegistration | null> {
    const { rows } = await db.query<Row>(
      `SELECT ${COLUMNS} FROM webhooks WHERE tenant_id = $1 AND event = $2`,
      [tenantId, event],
    );
    return rows[0] ? toRegistration(rows[0]) : null;
  },

  async list(db: Queryable, tenantId: string): Promise<WebhookRegistration[]> {
    const { rows } = await db.query<Row>(`SELECT ${COLUMNS} FROM webhooks WHERE tenant_id = $1 ORDER BY id`, [
      tenantId,
    ]);
    return rows.map(toRegistration);
  },

  /** Applies the given fields; false when the tenant has no webhook for this event type. */
  async update(db: Queryable, tenantId: string, event: WebhookEvent, patch: WebhookPatch): Promise<boolean> {
    const res = await db.query(
      `UPDATE webhooks SET
         url = COALESCE($3, url),
         events = COALESCE($4::jsonb, events),
         header_names = CASE WHEN $5 THEN $6::text[] ELSE header_names END,
         headers_sealed = CASE WHEN $5 THEN $7::bytea ELSE headers_sealed END,
         active = COALESCE($8, active),
         updated_at = now()
       WHERE tenant_id = $1 AND event = $2`,
      [
        tenantId,
        event,
        patch.url ?? null,
        patch.events ? JSON.stringify(patch.events) : null,
        patch.headers !== undefined,
        patch.headers?.names ?? [],
        patch.headers?.sealed ?? null,
        patch.active ?? null,
      ],
    );
    return res.rowCount > 0;
  },

  async setSecret(
    db: Queryable,
    tenantId: string,
    event: WebhookEvent,
    secretSealed: Buffer,
  ): Promise<boolean> {
    const res = await db.query(
      'UPDATE webhooks SET secret_sealed = $3, updated_at = now() WHERE tenant_id = $1 AND event = $2',
      [tenantId, event, secretSealed],
    );
    return res.rowCount > 0;
  },

  async delete(db: Queryable, tenantId: string, event: WebhookEvent): Promise<boolean> {
    const res = await db.query('DELETE FROM webhooks WHERE tenant_id = $1 AND event = $2', [tenantId, event]);
    return res.rowCount > 0;
  },
};

/** A webhook as the dispatcher delivers to it: header values and signing secret unsealed. */
export interface DispatchWebhook {
  id: string;
  tenantId: string;
  event: WebhookEvent;
  url: string;
  method: string;
  active: boolean;
  events: WebhookEventToggles | null;
  headers: Record<string, string>;
  /** `whsec_<base64>`. */
  secret: string;
}

type DispatchRow = {
  id: string;
  tenant_id: string;
  event: WebhookEvent;
  url: string;
  method: string;
  active: boolean;
  events: WebhookEventToggles | null;
  headers_sealed: Uint8Array | null;
  secret_sealed: Uint8Array;
};

const toDispatch = (sealer: Sealer, r: DispatchRow): DispatchWebhook => ({
  id: r.id,
  tenantId: r.tenant_id,
  event: r.event,
  url: r.url,
  method: r.method,
  active: r.active,
  events: r.events,
  headers: r.headers_sealed ? (JSON.parse(sealer.openText(r.headers_sealed)) as Record<string, string>) : {},
  secret: sealer.openText(r.secret_sealed),
});

const DISPATCH_COLUMNS = 'id, tenant_id, event, url, method, active, events, headers_sealed, secret_sealed';

/** What routing needs of an account's webhooks: no secrets are unsealed for it. */
export interface WebhookRoute {
  id: string;
  event: WebhookEvent;
  active: boolean;
  events: WebhookEventToggles | null;
}

/**
 * The routing view of these accounts' webhooks, by account (one query per dispatcher store, which
 * holds the batches of every account flushed at that moment); an account without any has none.
 */
export async function loadWebhookRoutes(
  db: Queryable,
  tenantIds: readonly string[],
): Promise<Map<string, WebhookRoute[]>> {
  const out = new Map<string, WebhookRoute[]>(tenantIds.map((id) => [id, []]));
  if (tenantIds.length === 0) return out;
  const { rows } = await db.query<WebhookRoute & { tenant_id: string }>(
    'SELECT tenant_id, id, event, active, events FROM webhooks WHERE tenant_id = ANY($1::text[])',
    [[...new Set(tenantIds)]],
  );
  for (const { tenant_id, ...route } of rows) out.get(tenant_id)?.push(route);
  return out;
}

/** Every tenant webhook of these tenants, unsealed. */
export async function loadTenantWebhooks(
  db: Queryable,
  sealer: Sealer,
  tenantIds: string[],
): Promise<DispatchWebhook[]> {
  if (tenantIds.length === 0) return [];
  const { rows } = await db.query<DispatchRow>(
    `SELECT ${DISPATCH_COLUMNS} FROM webhooks WHERE tenant_id = ANY($1::text[])`,
    [tenantIds],
  );
  return rows.map((r) => toDispatch(sealer, r));
}

/** One tenant webhook by id, unsealed; null when it was deleted. */
export async function loadWebhookById(
  db: Queryable,
  sealer: Sealer,
  tenantId: string,
  webhookId: string,
): Promise<DispatchWebhook | null> {
  const { rows } = await db.query<DispatchRow>(
    `SELECT ${DISPATCH_COLUMNS} FROM webhooks WHERE tenant_id = $1 AND id = $2`,
    [tenantId, webhookId],
  );
  return rows[0] ? toDispatch(sealer, rows[0]) : null;
}
