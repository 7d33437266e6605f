import { BusMessages, IdPrefix, newId } from '@mailyard/contracts';
import {
  type Db,
  type Queryable,
  type Sealer,
  outboxInsertSql,
  outboxMessage,
  outboxParams,
} from '@mailyard/platform';
import {
  type NewDelivery,
  deliveryParams,
  insertDeliveries,
  insertDeliveriesSql,
} from './webhook-deliveries';

/**
 * Inbound routing rows (docs/api/inbound.md), scoped to one
 * tenant: another tenant's domain or address behaves as absent. Header values arrive sealed;
 * `findInboundRoute` is the MX service's lookup by recipient domain (no tenant known yet).
 */

export type InboundMethod = 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';

export interface InboundDomainRow {
  tenantId: string;
  domain: string;
  url: string;
  method: InboundMethod;
  headerNames: string[];
  headersSealed: Buffer | null;
  wildcard: boolean;
}

export interface InboundDomainPatch {
  url?: string;
  method?: InboundMethod;
  headers?: { names: string[]; sealed: Buffer | null };
  wildcard?: boolean;
}

export interface InboundAddressRow {
  username: string;
  active: boolean;
  strict_replies: boolean;
}

type DomainRow = {
  tenant_id: string;
  domain: string;
  url: string;
  method: InboundMethod;
  header_names: string[];
  headers_sealed: Buffer | null;
  wildcard: boolean;
};

const toDomain = (r: DomainRow): InboundDomainRow => ({
  tenantId: r.tenant_id,
  domain: r.domain,
  url: r.url,
  method: r.method,
  headerNames: r.header_names,
  headersSealed: r.headers_sealed,
  wildcard: r.wildcard,
});

const DOMAIN_COLUMNS = 'tenant_id, domain, url, method, header_names, headers_sealed, wildcard';

export const inboundDomains = {
  /** `exists` when the domain already has an inbound route (of this or another tenant). */
  async create(db: Queryable, row: Omit<InboundDomainRow, 'wildcard'>): Promise<'created' | 'exists'> {
    const { rows } = await db.query(
      `INSERT INTO inbound_domains (tenant_id, domain, url, method, header_names, headers_sealed)
       VALUES ($1, $2, $3, $4, $5::text[], $6) ON CONFLICT DO NOTHING RETURNING domain`,
      [row.tenantId, row.domain, row.url, row.method, row.headerNames, row.headersSealed],
    );
    return rows.length > 0 ? 'created' : 'exists';
  },

  async get(db: Queryable, tenantId: string, domain: string): Promise<InboundDomainRow | null> {
    const { rows } = await db.query<DomainRow>(
      `SELECT ${DOMAIN_COLUMNS} FROM inbound_domains WHERE tenant_id = $1 AND domain = $2`,
      [tenantId, domain],
    );
    return rows[0] ? toDomain(rows[0]) : null;
  },

  /** Applies the given fields; false when the tenant has no such incoming domain. */
  async update(db: Queryable, tenantId: string, domain: string, patch: InboundDomainPatch): Promise<boolean> {
    const res = await db.query(
      `UPDATE inbound_domains SET
         url = COALESCE($3, url),
         method = COALESCE($4, method),
         header_names = CASE WHEN $5 THEN $6::text[] ELSE header_names END,
         headers_sealed = CASE WHEN $5 THEN $7::bytea ELSE headers_sealed END,
         wildcard = COALESCE($8, wildcard),
         updated_at = now()
       WHERE tenant_id = $1 AND domain = $2`,
      [
        tenantId,
        domain,
        patch.url ?? null,
        patch.method ?? null,
        patch.headers !== undefined,
        patch.headers?.names ?? [],
        patch.headers?.sealed ?? null,
        patch.wildcard ?? null,
      ],
    );
    return res.rowCount > 0;
  },
};

export const inboundAddresses = {
  /** `exists` for a duplicate username under the domain (usernames arrive lowercase). */
  async create(
    db: Queryable,
    tenantId: string,
    domain: string,
    username: string,
  ): Promise<'created' | 'exists'> {
    const { rows } = await db.query(
      `INSERT INTO inbound_addresses (tenant_id, domain, username) VALUES ($1, $2, $3)
       ON CONFLICT DO NOTHING RETURNING username`,
      [tenantId, domain, username],
    );
    return rows.length > 0 ? 'created' : 'exists';
  },

  async update(
    db: Queryable,
    tenantId: string,
    domain: string,
    username: string,
    patch: { active?: boolean; strictReplies?: boolean },
  ): Promise<boolean> {
    const res = await db.query(
      `UPDATE inbound_addresses SET active = COALESCE($4, active), strict_replies = COALESCE($5, strict_replies),
         updated_at = now()
       WHERE tenant_id = $1 AND domain = $2 AND username = $3`,
      [tenantId, domain, username, patch.active ?? null, patch.strictReplies ?? null],
    );
    return res.rowCount > 0;
  },

  async list(db: Queryable, tenantId: string, domain: string): Promise<InboundAddressRow[]> {
    const { rows } = await db.query<InboundAddressRow>(
      `SELECT username, active, strict_replies FROM inbound_addresses
       WHERE tenant_id = $1 AND domain = $2 ORDER BY username`,
      [tenantId, domain],
    );
    return rows;
  },
};

/** What the MX service needs to decide RCPT TO and route a message (docs/inbound.md "The MX service (`services/inbound-smtp`)"). */
export interface InboundRoute {
  domain: InboundDomainRow;
  /**
   * The sending domain's id, `domain_<ulid>`: the event's `mailer-id` and, as the id of the
   * domain's incoming webhook (one per sending domain), its `webhook-id`.
   */
  mailerId: string;
  /** The sending domain is verified now. */
  verified: boolean;
  /** The configured address, null when the username is not configured. */
  address: { active: boolean; strictReplies: boolean } | null;
}

/**
 * The route for `username@domain`, or null when no tenant receives mail for the domain: no
 * incoming domain, or its sending domain deleted (the incoming domain's row outlives a domain
 * deletion, the route does not). Read from the database at each call, no cache: a deletion or a
 * lost verification applies to the next RCPT TO.
 */
export async function findInboundRoute(
  db: Queryable,
  domain: string,
  username: string,
): Promise<InboundRoute | null> {
  return (await findInboundRoutes(db, [{ domain, username }]))[0]!;
}

/**
 * findInboundRoute for several recipients in one query (the MX service's concurrent RCPT TO
 * lookups share a round trip), answers in the order of `keys`.
 */
export async function findInboundRoutes(
  db: Queryable,
  keys: ReadonlyArray<{ domain: string; username: string }>,
): Promise<Array<InboundRoute | null>> {
  if (keys.length === 0) return [];
  const { rows } = await db.query<
    DomainRow & {
      n: number;
      active: boolean | null;
      strict_replies: boolean | null;
      mailer_id: string;
      verified: boolean;
    }
  >(
    `SELECT k.n::int AS n, d.tenant_id, d.domain, d.url, d.method, d.header_names, d.headers_sealed, d.wildcard,
            a.active, a.strict_replies, s.id AS mailer_id, s.verified
       FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS k(domain, username, n)
       JOIN inbound_domains d ON d.domain = k.domain
       JOIN domains s ON s.tenant_id = d.tenant_id AND s.name = d.domain AND s.deleted_at IS NULL
       LEFT JOIN inbound_addresses a ON a.tenant_id = d.tenant_id AND a.domain = d.domain AND a.username = k.username`,
    [keys.map((k) => k.domain), keys.map((k) => k.username)],
  );
  const out: Array<InboundRoute | null> = keys.map(() => null);
  for (const r of rows)
    out[r.n - 1] = {
      domain: toDomain(r),
      mailerId: r.mailer_id,
      verified: r.verified,
      address: r.active === null ? null : { active: r.active, strictReplies: r.strict_replies === true },
    };
  return out;
}

/** The incoming webhook of a domain as the dispatcher posts to it: header values unsealed. */
export async function loadInboundWebhook(
  db: Queryable,
  sealer: Sealer,
  tenantId: string,
  domain: string,
): Promise<{ url: string; method: string; headers: Record<string, string> } | null> {
  const row = await inboundDomains.get(db, tenantId, domain);
  if (!row) return null;
  const headers = row.headersSealed
    ? (JSON.parse(sealer.openText(row.headersSealed)) as Record<string, string>)
    : {};
  return { url: row.url, method: row.method, headers };
}

export interface InboundRecipient {
  address: string;
  /** The receiving tenant; '' for the service's own addresses (resolved from the signed address). */
  tenantId: string;
  domain: string;
  /** The sending domain's mailer id (the event's `mailer-id`); '' for the service's own addresses. */
  mailerId: string;
  /**
   * Set for the service's own addresses on the bounce domain (VERP return paths, the feedback-loop
   * address, mailto unsubscribes): the message is about one of our sends, never posted to a webhook.
   */
  service?: 'bounce' | 'feedback' | 'unsubscribe' | 'dmarc' | 'tls_rpt';
}

export interface NewInboundMessage {
  remoteIp: string;
  helo: string;
  mailFrom: string;
  recipients: InboundRecipient[];
  raw: Buffer;
}

export interface StoredInboundMessage {
  id: string;
  remoteIp: string;
  helo: string;
  mailFrom: string;
  raw: Buffer;
  recipients: InboundRecipient[];
  status: 'stored' | 'processed';
  receivedAt: Date;
}

/**
 * The UPDATE that marks the messages whose ids are the text[] parameter `ids` processed, only those
 * still `stored`, returning their ids. Each id is one primary-key probe (OFFSET 0 keeps the
 * subquery a parameterised index scan) and the row is updated by its ctid; the `stored` condition
 * is applied to the row found, not to the scan. Written as `id = ANY(...) AND status = 'stored'`,
 * the planner read the partial index inbound_messages_stored_idx in full (a BitmapAnd with the
 * primary key, or that index alone for a batch of a few hundred): the index keeps an entry for
 * every processed message until VACUUM (the update is not HOT and a bitmap scan never marks dead
 * entries), so each completion read every message of the last vacuum interval (bench/README.md
 * "inbound", issue 10 sixth pass: 437 index entries per message).
 * If another process marks the row between the probe and the update, the re-check of the updated
 * version fails (new ctid, not `stored`) and the row is not returned.
 */
function markProcessedSql(ids: string): string {
  return `UPDATE inbound_messages t SET status = 'processed', processed_at = now()
            FROM unnest(${ids}::text[]) AS k(id),
                 LATERAL (SELECT ctid AS row FROM inbound_messages WHERE id = k.id OFFSET 0) p
           WHERE t.ctid = p.row AND t.status = 'stored'
       RETURNING t.id`;
}

export const inboundMessages = {
  /**
   * Stores the raw message and announces it through the outbox, in one statement (atomic on its
   * own: one round trip and one commit per accepted message).
   */
  async store(db: Queryable, msg: NewInboundMessage): Promise<string> {
    return (await inboundMessages.storeBatch(db, [msg]))[0]!;
  },

  /**
   * Stores several messages and their announcements in ONE statement (group commit of the MX
   * service's concurrent sessions): all are committed or none. Returns their ids in order.
   * `announce: false` writes no outbox rows: the MX service processes the messages it stored
   * itself and finds the ones left `stored` with `storedBefore` (crash recovery).
   */
  async storeBatch(
    db: Queryable,
    msgs: readonly NewInboundMessage[],
    opts: { announce?: boolean } = {},
  ): Promise<string[]> {
    if (msgs.length === 0) return [];
    const ids = msgs.map(() => newId(IdPrefix.inboundMessage));
    const announced = opts.announce === false ? [] : ids;
    const announce = outboxParams(
      announced.map((id) => outboxMessage(BusMessages.inboundMessageStored, { message_id: id })),
    );
    const params: unknown[] = [...announce];
    const values = msgs.map((msg, i) => {
      const at = params.length;
      params.push(
        ids[i],
        msg.remoteIp,
        msg.helo,
        msg.mailFrom,
        JSON.stringify(msg.recipients),
        msg.raw,
        msg.raw.length,
      );
      return `($${at + 1}, $${at + 2}, $${at + 3}, $${at + 4}, $${at + 5}::jsonb, $${at + 6}::bytea, $${at + 7}::int)`;
    });
    // Both inserts belong to the one statement, so a message is announced exactly when it is stored.
    await db.query(
      `WITH m AS (
         INSERT INTO inbound_messages (id, remote_ip, helo, mail_from, recipients, raw, size)
         VALUES ${values.join(', ')}
       )
       ${outboxInsertSql('$1', '$2', '$3')}`,
      params,
    );
    return ids;
  },

  /**
   * Ids of messages still `stored` that were received more than `olderThanMs` ago, oldest first
   * (partial index inbound_messages_stored_idx): the ones no process finished, e.g. after a crash.
   */
  async storedBefore(db: Queryable, olderThanMs: number, limit: number): Promise<string[]> {
    const { rows } = await db.query<{ id: string }>(
      `SELECT id FROM inbound_messages
        WHERE status = 'stored' AND received_at < now() - make_interval(secs => $1::float8 / 1000)
        ORDER BY received_at LIMIT $2`,
      [olderThanMs, limit],
    );
    return rows.map((r) => r.id);
  },

  async get(db: Queryable, id: string): Promise<StoredInboundMessage | null> {
    return (await inboundMessages.getMany(db, [id]))[0]!;
  },

  /** Several messages in one query, in the order of `ids` (null for an unknown id). */
  async getMany(db: Queryable, ids: readonly string[]): Promise<Array<StoredInboundMessage | null>> {
    if (ids.length === 0) return [];
    const { rows } = await db.query<{
      id: string;
      remote_ip: string;
      helo: string;
      mail_from: string;
      raw: Buffer | Uint8Array;
      recipients: InboundRecipient[];
      status: 'stored' | 'processed';
      received_at: Date | string;
    }>(
      // One primary-key probe per id (OFFSET 0 keeps the subquery a parameterised index scan): with
      // `id = ANY(...)` a table without statistics yet (a new installation) was read in full.
      `SELECT m.id, m.remote_ip, m.helo, m.mail_from, m.raw, m.recipients, m.status, m.received_at
         FROM unnest($1::text[]) AS k(id),
              LATERAL (SELECT * FROM inbound_messages WHERE id = k.id OFFSET 0) m`,
      [ids],
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    return ids.map((id) => {
      const r = byId.get(id);
      if (!r) return null;
      return {
        id: r.id,
        remoteIp: r.remote_ip,
        helo: r.helo,
        mailFrom: r.mail_from,
        raw: Buffer.from(r.raw),
        recipients: r.recipients,
        status: r.status,
        receivedAt: new Date(r.received_at),
      };
    });
  },

  /**
   * Hands the payloads to the dispatcher (webhook_deliveries) and marks the message processed;
   * false when another consumer already did (at-least-once bus delivery). Without `effects` it is
   * one statement; with them (the bounce and complaint outcomes, feedback.ts applyFeedbackIn) one
   * transaction, so an outcome is never applied without the mark or twice.
   */
  async complete(
    db: Db,
    id: string,
    deliveries: NewDelivery[],
    effects?: (tx: Queryable) => Promise<void>,
  ): Promise<boolean> {
    if (effects)
      return db.transaction(async (tx) => {
        if ((await tx.query(markProcessedSql('$1'), [[id]])).rowCount === 0) return false;
        await insertDeliveries(tx, deliveries);
        await effects(tx);
        return true;
      });
    return (await inboundMessages.completeBatch(db, [{ id, deliveries }]))[0]!;
  },

  /**
   * complete() without effects for several messages in ONE statement: each message is marked
   * processed and its deliveries written only if it was still `stored` (a message another
   * consumer already completed gets false and writes nothing). Answers in the order of `items`.
   */
  async completeBatch(
    db: Queryable,
    items: ReadonlyArray<{ id: string; deliveries: NewDelivery[] }>,
  ): Promise<boolean[]> {
    if (items.length === 0) return [];
    const ids = items.map((i) => i.id);
    const all = items.flatMap((i) => i.deliveries);
    const owners = items.flatMap((i) => i.deliveries.map(() => i.id));
    // Each delivery is written only beside its own message's mark: o pairs delivery ids ($3, the
    // first column of deliveryParams) with their message, joined to the rows m marked.
    const { rows } = await db.query<{ id: string }>(
      `WITH m AS (${markProcessedSql('$1')}), d AS (${insertDeliveriesSql(3, 'm, unnest($3::text[], $2::text[]) AS o(delivery_id, owner)')}
          WHERE o.delivery_id = t.id AND o.owner = m.id)
       SELECT id FROM m`,
      [ids, owners, ...deliveryParams(all).params],
    );
    const marked = new Set(rows.map((r) => r.id));
    return ids.map((id) => marked.has(id));
  },
};
