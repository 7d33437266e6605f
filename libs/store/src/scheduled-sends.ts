/**
 * Scheduled sends (table `scheduled_sends`, migration 0034; docs/operations.md "Scheduled
 * sends"). A send accepted with a `send_at` ahead is written as every send is (sends.insertAccepted:
 * the send row, its log rows, and its stats) but with no outbox rows; `hold` then, in the same
 * transaction, marks its log rows SCHEDULED and keeps the outbox rows its release will write.
 *
 * The one invariant: a held send is either released (`releaseDue`: the row moves to the outbox,
 * the log rows become QUEUED) or cancelled (`cancel`: the row is deleted, the log rows become
 * CANCELLED with their send outcome), never both and never neither. Both start by taking the
 * row's lock (a DELETE), then update the log rows: the same order, so they never deadlock, and
 * the second one finds the row gone and does nothing. Everything is in PostgreSQL (or PGlite),
 * so a restart at any moment loses nothing: a row not committed as released is still held.
 */
import type { Db, OutboxRow, Queryable } from '@mailyard/platform';
import { outboxInsertSelectSql } from '@mailyard/platform';

/** What cancel found: no such send of the tenant, or how many log rows it cancelled (0 = none left). */
export type CancelOutcome = { found: false } | { found: true; cancelled: number };

const HOLD = `
WITH logs AS (
  UPDATE email_logs SET status = 'SCHEDULED'
   WHERE tenant_id = $1 AND ref_id = $2 AND status = 'QUEUED'
)
INSERT INTO scheduled_sends (ref_id, tenant_id, send_at, commands) VALUES ($2, $1, $3, $4::jsonb)`;

/**
 * The due rows (earliest first, at most $1; rows another transaction holds are skipped), their
 * log rows set QUEUED and their outbox rows written, in one statement.
 */
const RELEASE_DUE = `
WITH due AS (
  DELETE FROM scheduled_sends WHERE ref_id = ANY(ARRAY(
    SELECT ref_id FROM scheduled_sends WHERE send_at <= now() ORDER BY send_at LIMIT $1 FOR UPDATE SKIP LOCKED
  )) RETURNING ref_id, tenant_id, send_at, commands
),
logs AS (
  UPDATE email_logs l SET status = 'QUEUED'
    FROM due WHERE l.tenant_id = due.tenant_id AND l.ref_id = due.ref_id AND l.status = 'SCHEDULED'
),
ob AS (
  ${outboxInsertSelectSql(`SELECT c->>'exchange', c->>'routing_key', c->'message'
      FROM due, jsonb_array_elements(due.commands) WITH ORDINALITY AS x(c, n)
     ORDER BY due.send_at, due.ref_id, x.n`)}
)
SELECT count(*)::integer AS n FROM due`;

export const scheduledSends = {
  /**
   * Holds an accepted send until `sendAt`: its log rows (written QUEUED just before, in `tx`)
   * become SCHEDULED and `commands` (its `send.email` outbox rows) wait here instead of in the outbox.
   */
  async hold(
    tx: Queryable,
    tenantId: string,
    refId: string,
    sendAt: Date,
    commands: readonly OutboxRow[],
  ): Promise<void> {
    const rows = commands.map((c) => ({
      exchange: c.exchange,
      routing_key: c.routingKey,
      message: c.envelope,
    }));
    await tx.query(HOLD, [tenantId, refId, sendAt.toISOString(), JSON.stringify(rows)]);
  },

  /** Releases up to `limit` due sends (see RELEASE_DUE); returns how many. */
  async releaseDue(db: Queryable, limit: number): Promise<number> {
    const { rows } = await db.query<{ n: number }>(RELEASE_DUE, [limit]);
    return rows[0]?.n ?? 0;
  },

  /** Milliseconds until the next held send is due by the database's clock (0 when overdue); null when none. */
  async msUntilNextDue(db: Queryable): Promise<number | null> {
    const { rows } = await db.query<{ ms: number | null }>(
      'SELECT ceil(extract(epoch FROM (min(send_at) - now())) * 1000)::float8 AS ms FROM scheduled_sends',
    );
    const ms = rows[0]?.ms;
    return ms === null || ms === undefined ? null : Math.max(0, Number(ms));
  },

  /**
   * Cancels the tenant's send `refId` when it is still held: the row is deleted and its SCHEDULED
   * log rows become CANCELLED (send outcome CANCELLED: the send service and the event writer
   * leave them alone). A release holding the row finishes first; then there is nothing left.
   */
  async cancel(db: Db, tenantId: string, refId: string): Promise<CancelOutcome> {
    return db.transaction(async (tx) => {
      const held = await tx.query(
        'DELETE FROM scheduled_sends WHERE ref_id = $1 AND tenant_id = $2 RETURNING ref_id',
        [refId, tenantId],
      );
      if (held.rows.length === 0) {
        const send = await tx.query('SELECT 1 FROM sends WHERE ref_id = $1 AND tenant_id = $2', [
          refId,
          tenantId,
        ]);
        return send.rows.length === 0 ? { found: false } : { found: true, cancelled: 0 };
      }
      const { rows } = await tx.query<{ n: number }>(
        `WITH done AS (
           UPDATE email_logs SET status = 'CANCELLED', send_outcome = 'CANCELLED'
            WHERE tenant_id = $1 AND ref_id = $2 AND status = 'SCHEDULED'
            RETURNING 1
         )
         SELECT count(*)::integer AS n FROM done`,
        [tenantId, refId],
      );
      return { found: true, cancelled: rows[0]?.n ?? 0 };
    });
  },
};
