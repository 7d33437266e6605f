/**
 * Provider event callbacks (migration 0028; the tracking service's SparkPost webhook,
 * docs/providers.md "SparkPost callbacks"):
 * - `callbackMailer`: the credentials a callback must present, of a live (not deleted) mailer;
 * - `providerCallbacks.store`: the raw batch, written before the endpoint answers 200;
 * - `claim` / `lease` / `finish` / `fail`: the worker's lease on one stored batch (lease-sql.ts,
 *   FOR UPDATE SKIP LOCKED: several tracking processes never take the same batch; a holder that
 *   dies lets the lease run out and the batch is claimed again);
 * - `firstSeen`: SparkPost's event_id per mailer, recorded in the transaction that records the
 *   event, so an event delivered twice (a retried batch) is processed once;
 * - `findProviderCopyRecipient`: the copy recipient an event names, within one tenant only.
 */
import { ulid } from '@mailyard/contracts';
import type { Lease, Queryable } from '@mailyard/platform';
import { leaseEndSql, leaseFreeSql } from './lease-sql';
import {
  TRACKED_RECIPIENT_SELECT,
  type TrackedRecipient,
  type TrackedRecipientRow,
  toTrackedRecipient,
} from './tracked-recipient';

/** What a provider callback is checked against. */
export interface CallbackMailer {
  id: string;
  tenantId: string;
  configType: string;
  username: string | null;
  passwordDigest: Buffer | null;
}

/** The mailer `mailerId` with its callback credentials; null when unknown or deleted. */
export async function callbackMailer(db: Queryable, mailerId: string): Promise<CallbackMailer | null> {
  const { rows } = await db.query<{
    id: string;
    tenant_id: string;
    config_type: string;
    callback_username: string | null;
    callback_password_digest: Buffer | null;
  }>(
    `SELECT id, tenant_id, config_type, callback_username, callback_password_digest
       FROM mailers WHERE id = $1 AND deleted_at IS NULL`,
    [mailerId],
  );
  const r = rows[0];
  if (!r) return null;
  return {
    id: r.id,
    tenantId: r.tenant_id,
    configType: r.config_type,
    username: r.callback_username,
    passwordDigest: r.callback_password_digest,
  };
}

export interface StoredCallbackBatch {
  id: string;
  tenantId: string;
  mailerId: string;
  provider: string;
  body: string;
  /** Claims so far, this one included. */
  attempts: number;
}

export const providerCallbacks = {
  /** Stores a received batch; returns its id. */
  async store(
    db: Queryable,
    b: { tenantId: string; mailerId: string; provider: string; body: string; batchId?: string },
  ): Promise<string> {
    const id = ulid();
    await db.query(
      `INSERT INTO provider_callback_batches (id, tenant_id, mailer_id, provider, body, batch_id)
       VALUES ($1, $2, $3, $4, $5, $6)`,
      [id, b.tenantId, b.mailerId, b.provider, b.body, b.batchId ?? null],
    );
    return id;
  },

  /**
   * Leases the oldest unprocessed batch whose lease is free to `owner` for `leaseMs`, counting
   * the claim; null when there is none. Batches claimed `maxAttempts` times already are left alone
   * (their `last_error` says why; docs/providers.md).
   */
  async claim(
    db: Queryable,
    owner: string,
    leaseMs: number,
    maxAttempts: number,
  ): Promise<StoredCallbackBatch | null> {
    const { rows } = await db.query<{
      id: string;
      tenant_id: string;
      mailer_id: string;
      provider: string;
      body: string;
      attempts: number;
    }>(
      `UPDATE provider_callback_batches b
          SET lease_owner = $1, leased_until = ${leaseEndSql('$2')}, attempts = b.attempts + 1
        WHERE b.id = (SELECT id FROM provider_callback_batches
                       WHERE processed_at IS NULL AND ${leaseFreeSql('leased_until')} AND attempts < $3
                       ORDER BY received_at LIMIT 1 FOR UPDATE SKIP LOCKED)
        RETURNING b.id, b.tenant_id, b.mailer_id, b.provider, b.body, b.attempts`,
      [owner, leaseMs, maxAttempts],
    );
    const r = rows[0];
    if (!r) return null;
    return {
      id: r.id,
      tenantId: r.tenant_id,
      mailerId: r.mailer_id,
      provider: r.provider,
      body: r.body,
      attempts: Number(r.attempts),
    };
  },

  /** The lease `owner` holds on a claimed batch, as the platform's Lease (renew, release). */
  lease(db: Queryable, id: string, owner: string, leaseMs: number): Lease {
    return {
      ttlMs: leaseMs,
      async renew() {
        const res = await db.query(
          `UPDATE provider_callback_batches SET leased_until = ${leaseEndSql('$3')}
            WHERE id = $1 AND lease_owner = $2 AND processed_at IS NULL`,
          [id, owner, leaseMs],
        );
        return res.rowCount > 0;
      },
      async release() {
        const res = await db.query(
          `UPDATE provider_callback_batches SET leased_until = NULL, lease_owner = NULL
            WHERE id = $1 AND lease_owner = $2 AND processed_at IS NULL`,
          [id, owner],
        );
        return res.rowCount > 0;
      },
    };
  },

  /**
   * Marks a batch processed, inside the transaction that recorded its events; false when `owner`
   * no longer holds it (the caller rolls back: the new holder processes it).
   */
  async finish(db: Queryable, id: string, owner: string): Promise<boolean> {
    const res = await db.query(
      `UPDATE provider_callback_batches
          SET processed_at = now(), leased_until = NULL, lease_owner = NULL, last_error = NULL
        WHERE id = $1 AND lease_owner = $2 AND processed_at IS NULL`,
      [id, owner],
    );
    return res.rowCount > 0;
  },

  /**
   * Gives a batch back after a failed attempt, keeping the error: it is claimed again once
   * `retryInMs` have passed (the lease column doubles as the retry time).
   */
  async fail(db: Queryable, id: string, owner: string, error: string, retryInMs: number): Promise<void> {
    await db.query(
      `UPDATE provider_callback_batches SET leased_until = ${leaseEndSql('$4')}, lease_owner = NULL, last_error = $3
        WHERE id = $1 AND lease_owner = $2 AND processed_at IS NULL`,
      [id, owner, error.slice(0, 1000), retryInMs],
    );
  },

  /** Batches not processed yet (readiness, tests). */
  async pending(db: Queryable): Promise<number> {
    const { rows } = await db.query<{ n: string }>(
      'SELECT count(*) AS n FROM provider_callback_batches WHERE processed_at IS NULL',
    );
    return Number(rows[0]?.n ?? 0);
  },

  /**
   * Records that `eventId` of `mailerId` is processed; true the first time. Call it inside the
   * transaction recording the event, so both happen or neither.
   */
  async firstSeen(db: Queryable, tenantId: string, mailerId: string, eventId: string): Promise<boolean> {
    const res = await db.query(
      `INSERT INTO provider_callback_events (mailer_id, event_id, tenant_id) VALUES ($1, $2, $3)
       ON CONFLICT (mailer_id, event_id) DO NOTHING`,
      [mailerId, eventId, tenantId],
    );
    return res.rowCount > 0;
  },
};

/** A matched copy recipient, with what provider events need beyond TrackedRecipient. */
export interface ProviderCopyRecipient extends TrackedRecipient {
  /** The send attempts made for the copy so far (email_logs.attempts). */
  attempts: number;
}

/**
 * The recipient `email` (case-insensitive) of copy `copyId` of send `refId` of tenant
 * `tenantId`; null when there is none (another tenant's copy reads as absent).
 */
export async function findProviderCopyRecipient(
  db: Queryable,
  tenantId: string,
  refId: string,
  copyId: string,
  email: string,
): Promise<ProviderCopyRecipient | null> {
  const { rows } = await db.query<TrackedRecipientRow>(
    `${TRACKED_RECIPIENT_SELECT}
      WHERE l.tenant_id = $1 AND l.ref_id = $2 AND l.copy_id = $3 AND lower(l.recipient) = lower($4)
      ORDER BY l.id LIMIT 1`,
    [tenantId, refId, copyId, email],
  );
  const r = rows[0];
  return r ? { ...toTrackedRecipient(r), attempts: Number(r.attempts) } : null;
}
