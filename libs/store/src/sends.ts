import type { StoredSendRequest } from '@mailyard/contracts';
import type { Queryable } from '@mailyard/platform';

/** What a send holds, as accepted and as read back. */
interface SendFields {
  refId: string;
  tenantId: string;
  mailerId: string;
  campaignId: string | null;
  customArgs: Record<string, unknown> | null;
  request: StoredSendRequest;
}

export interface NewSend extends SendFields {
  idempotencyKey: string | null;
  requestHash: string | null;
}

export interface IdempotentSend {
  refId: string;
  requestHash: string | null;
}

export interface StoredSend extends SendFields {
  createdAt: string;
}

/** Accepted sends (table `sends`), always scoped to one tenant. */
export const sends = {
  /** The live send holding `key` for this tenant (accepted less than `ttlSeconds` ago), if any. */
  async findByIdempotencyKey(
    db: Queryable,
    tenantId: string,
    key: string,
    ttlSeconds: number,
  ): Promise<IdempotentSend | null> {
    const { rows } = await db.query<{ ref_id: string; request_hash: string | null }>(
      `SELECT ref_id, request_hash FROM sends
        WHERE tenant_id = $1 AND idempotency_key = $2 AND created_at > now() - $3::integer * interval '1 second'`,
      [tenantId, key, ttlSeconds],
    );
    const r = rows[0];
    return r ? { refId: r.ref_id, requestHash: r.request_hash } : null;
  },

  /** Frees `key` when the send holding it is older than `ttlSeconds`, so a new send may take it. */
  async releaseExpiredIdempotencyKey(
    tx: Queryable,
    tenantId: string,
    key: string,
    ttlSeconds: number,
  ): Promise<void> {
    await tx.query(
      `UPDATE sends SET idempotency_key = NULL
        WHERE tenant_id = $1 AND idempotency_key = $2 AND created_at <= now() - $3::integer * interval '1 second'`,
      [tenantId, key, ttlSeconds],
    );
  },

  /**
   * Inserts the send; false (and nothing written) when its idempotency key is already held by
   * another send of the tenant. A concurrent insert of the same key waits for the other
   * transaction and then reports false, so duplicates never both insert.
   */
  async insert(tx: Queryable, s: NewSend): Promise<boolean> {
    const res = await tx.query(
      `INSERT INTO sends (ref_id, tenant_id, mailer_id, campaign_id, custom_args, request, idempotency_key, request_hash)
       VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb, $7, $8)
       ON CONFLICT (tenant_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING`,
      [
        s.refId,
        s.tenantId,
        s.mailerId,
        s.campaignId,
        s.customArgs === null ? null : JSON.stringify(s.customArgs),
        JSON.stringify(s.request),
        s.idempotencyKey,
        s.requestHash,
      ],
    );
    return res.rowCount === 1;
  },

  /** An accepted send with its stored request (for the send service). */
  async get(db: Queryable, tenantId: string, refId: string): Promise<StoredSend | null> {
    const { rows } = await db.query<{
      ref_id: string;
      tenant_id: string;
      mailer_id: string;
      campaign_id: string | null;
      custom_args: Record<string, unknown> | null;
      request: StoredSendRequest;
      created_at: Date;
    }>(
      `SELECT ref_id, tenant_id, mailer_id, campaign_id, custom_args, request, created_at
         FROM sends WHERE tenant_id = $1 AND ref_id = $2`,
      [tenantId, refId],
    );
    const r = rows[0];
    if (!r) return null;
    return {
      refId: r.ref_id,
      tenantId: r.tenant_id,
      mailerId: r.mailer_id,
      campaignId: r.campaign_id,
      customArgs: r.custom_args,
      request: r.request,
      createdAt: r.created_at.toISOString(),
    };
  },
};
