/**
 * History backfill jobs (docs/api/backfill.md, docs/backfill.md). The table is
 * the work queue of services/imap-backfill: a worker claims a due active job with a lease
 * (FOR UPDATE SKIP LOCKED), renews it while it runs, checkpoints per folder and ends the job.
 * A worker that dies leaves the lease to expire and another (or the restarted one) resumes from
 * the checkpoint. One active job per mailer is enforced by a partial unique index.
 */
import {
  type BackfillFolders,
  type BackfillPlan,
  type BackfillStatus,
  BusMessages,
  type MailerWebhookMessage,
} from '@mailyard/contracts';
import { type Db, type Lease, type Queryable, writeOutbox } from '@mailyard/platform';
import { leaseEndSql, leaseFreeSql } from './lease-sql';

export interface BackfillJob {
  id: string;
  tenantId: string;
  mailerId: string;
  status: BackfillStatus;
  participant: string | null;
  windowStart: Date | null;
  windowEnd: Date;
  count: number;
  folders: BackfillFolders;
  processed: number;
  percent: number;
  failedReason: string;
  checkpoint: BackfillCheckpoint;
  attempts: number;
  startedAt: Date;
  endedAt: Date | null;
}

/** The worker's resume point (JSON; its shape is services/imap-backfill's checkpoint.ts). */
export type BackfillCheckpoint = Record<string, unknown>;

type Row = {
  id: string;
  tenant_id: string;
  mailer_id: string;
  status: BackfillStatus;
  participant: string | null;
  window_start: Date | null;
  window_end: Date;
  max_count: number;
  folders: BackfillFolders;
  processed: number;
  percent: number;
  failed_reason: string;
  checkpoint: BackfillCheckpoint;
  attempts: number;
  started_at: Date;
  ended_at: Date | null;
};

const toJob = (r: Row): BackfillJob => ({
  id: r.id,
  tenantId: r.tenant_id,
  mailerId: r.mailer_id,
  status: r.status,
  participant: r.participant,
  windowStart: r.window_start,
  windowEnd: r.window_end,
  count: Number(r.max_count),
  folders: r.folders,
  processed: Number(r.processed),
  percent: Number(r.percent),
  failedReason: r.failed_reason,
  checkpoint: r.checkpoint ?? {},
  attempts: Number(r.attempts),
  startedAt: r.started_at,
  endedAt: r.ended_at,
});

const COLUMNS = `id, tenant_id, mailer_id, status, participant, window_start, window_end, max_count, folders,
  processed, percent, failed_reason, checkpoint, attempts, started_at, ended_at`;

export type CreateJobResult = { created: true; jobId: string } | { created: false; activeJobId: string };

const isUniqueViolation = (err: unknown) => (err as { code?: string }).code === '23505';

export const backfillJobs = {
  /** Messages delivered so far and the time-based percent of a job (zeros when it is gone). */
  async progress(db: Queryable, jobId: string): Promise<{ processed: number; percent: number }> {
    const { rows } = await db.query<{ processed: number; percent: number }>(
      'SELECT processed, percent FROM backfill_jobs WHERE id = $1',
      [jobId],
    );
    return { processed: Number(rows[0]?.processed ?? 0), percent: Number(rows[0]?.percent ?? 0) };
  },

  /** Creates a pending job, or names the mailer's active job (the unique index decides a race). */
  async create(
    db: Queryable,
    tenantId: string,
    mailerId: string,
    jobId: string,
    plan: BackfillPlan,
  ): Promise<CreateJobResult> {
    try {
      await db.query(
        `INSERT INTO backfill_jobs (id, tenant_id, mailer_id, status, participant, window_start, window_end,
           max_count, folders)
         VALUES ($1, $2, $3, 'pending', $4, $5, $6, $7, $8::jsonb)`,
        [
          jobId,
          tenantId,
          mailerId,
          plan.participant,
          plan.windowStart,
          plan.windowEnd,
          plan.count,
          JSON.stringify(plan.folders),
        ],
      );
      return { created: true, jobId };
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      const active = await backfillJobs.active(db, tenantId, mailerId);
      if (!active) throw err;
      return { created: false, activeJobId: active };
    }
  },

  async active(db: Queryable, tenantId: string, mailerId: string): Promise<string | null> {
    const { rows } = await db.query<{ id: string }>(
      `SELECT id FROM backfill_jobs WHERE tenant_id = $1 AND mailer_id = $2 AND status IN ('pending', 'processing')`,
      [tenantId, mailerId],
    );
    return rows[0]?.id ?? null;
  },

  /** The job of this tenant and mailer; another tenant's or mailer's job is absent. */
  async get(db: Queryable, tenantId: string, mailerId: string, jobId: string): Promise<BackfillJob | null> {
    const { rows } = await db.query<Row>(
      `SELECT ${COLUMNS} FROM backfill_jobs WHERE tenant_id = $1 AND mailer_id = $2 AND id = $3`,
      [tenantId, mailerId, jobId],
    );
    return rows[0] ? toJob(rows[0]) : null;
  },

  /** pending/processing -> cancelled. Returns the status after, or null when absent. */
  async abort(
    db: Queryable,
    tenantId: string,
    mailerId: string,
    jobId: string,
  ): Promise<{ status: BackfillStatus; changed: boolean } | null> {
    const res = await db.query<{ status: BackfillStatus }>(
      `UPDATE backfill_jobs SET status = 'cancelled', ended_at = now(), lease_owner = NULL, lease_until = NULL,
          updated_at = now()
        WHERE tenant_id = $1 AND mailer_id = $2 AND id = $3 AND status IN ('pending', 'processing')
        RETURNING status`,
      [tenantId, mailerId, jobId],
    );
    if (res.rows[0]) return { status: 'cancelled', changed: true };
    const job = await backfillJobs.get(db, tenantId, mailerId, jobId);
    return job ? { status: job.status, changed: false } : null;
  },

  /** Claims one due active job whose lease is free or expired, for `leaseMs`. */
  async claim(db: Queryable, owner: string, leaseMs: number): Promise<BackfillJob | null> {
    const { rows } = await db.query<Row>(
      `UPDATE backfill_jobs SET lease_owner = $1, lease_until = ${leaseEndSql('$2')},
          updated_at = now()
        WHERE id = (
          SELECT id FROM backfill_jobs
           WHERE status IN ('pending', 'processing') AND next_run_at <= now()
             AND ${leaseFreeSql('lease_until')}
           ORDER BY next_run_at LIMIT 1 FOR UPDATE SKIP LOCKED)
        RETURNING ${COLUMNS}`,
      [owner, leaseMs],
    );
    return rows[0] ? toJob(rows[0]) : null;
  },

  /**
   * Renews the lease and reads the status: false when the job was cancelled (or taken over), so
   * the worker stops at its next slice.
   */
  async renew(db: Queryable, jobId: string, owner: string, leaseMs: number): Promise<boolean> {
    const res = await db.query(
      `UPDATE backfill_jobs SET lease_until = ${leaseEndSql('$3')}
        WHERE id = $1 AND lease_owner = $2 AND status IN ('pending', 'processing')`,
      [jobId, owner, leaseMs],
    );
    return res.rowCount > 0;
  },

  /** The lease `owner` holds on a claimed job, as the platform's Lease (renew, release). */
  lease(db: Queryable, jobId: string, owner: string, leaseMs: number): Lease {
    return {
      ttlMs: leaseMs,
      renew: () => backfillJobs.renew(db, jobId, owner, leaseMs),
      release: () => backfillJobs.release(db, jobId, owner),
    };
  },

  /** pending -> processing; false when the job is no longer this worker's. */
  async markProcessing(db: Queryable, jobId: string, owner: string): Promise<boolean> {
    const res = await db.query(
      `UPDATE backfill_jobs SET status = 'processing', updated_at = now()
        WHERE id = $1 AND lease_owner = $2 AND status IN ('pending', 'processing')`,
      [jobId, owner],
    );
    return res.rowCount > 0;
  },

  /** Stores progress after a batch was handed to the bus; false when cancelled meanwhile. */
  async checkpoint(
    db: Queryable,
    jobId: string,
    owner: string,
    p: { processed: number; percent: number; checkpoint: BackfillCheckpoint },
  ): Promise<boolean> {
    const res = await db.query(
      `UPDATE backfill_jobs SET processed = $3, percent = $4, checkpoint = $5::jsonb, attempts = 0, updated_at = now()
        WHERE id = $1 AND lease_owner = $2 AND status = 'processing'`,
      [
        jobId,
        owner,
        p.processed,
        Math.max(0, Math.min(100, Math.floor(p.percent))),
        JSON.stringify(p.checkpoint),
      ],
    );
    return res.rowCount > 0;
  },

  /** processing -> done (percent 100) or failed (with a reason); false when cancelled meanwhile. */
  async finish(
    db: Queryable,
    jobId: string,
    owner: string,
    outcome: { status: 'done' } | { status: 'failed'; reason: string },
  ): Promise<boolean> {
    const res = await db.query(
      `UPDATE backfill_jobs SET status = $3, failed_reason = $4,
          percent = CASE WHEN $3 = 'done' THEN 100 ELSE percent END,
          ended_at = now(), lease_owner = NULL, lease_until = NULL, updated_at = now()
        WHERE id = $1 AND lease_owner = $2 AND status IN ('pending', 'processing')`,
      [jobId, owner, outcome.status, outcome.status === 'failed' ? outcome.reason.slice(0, 1000) : ''],
    );
    return res.rowCount > 0;
  },

  /** Hands a job back at shutdown: due again at once for any worker, from its checkpoint. */
  async release(db: Queryable, jobId: string, owner: string): Promise<boolean> {
    const res = await db.query(
      `UPDATE backfill_jobs SET lease_owner = NULL, lease_until = NULL, updated_at = now()
        WHERE id = $1 AND lease_owner = $2 AND status IN ('pending', 'processing')`,
      [jobId, owner],
    );
    return res.rowCount > 0;
  },

  /** A transient failure: release the job, due again after `delayMs`. Returns the attempts so far. */
  async retryLater(db: Queryable, jobId: string, owner: string, delayMs: number): Promise<number> {
    const { rows } = await db.query<{ attempts: number }>(
      `UPDATE backfill_jobs SET attempts = attempts + 1, lease_owner = NULL, lease_until = NULL,
          next_run_at = now() + make_interval(secs => $3::double precision / 1000), updated_at = now()
        WHERE id = $1 AND lease_owner = $2 RETURNING attempts`,
      [jobId, owner, delayMs],
    );
    return Number(rows[0]?.attempts ?? 0);
  },
};

/**
 * Live sync bookkeeping (services/imap-backfill live-sync): where INBOX was read up to, per
 * mailer. IMAP: UIDVALIDITY and the last UID read (`cursor` null); API mailboxes (Gmail, Graph):
 * the service name, 0, and the provider's opaque cursor (history id, delta link).
 */
export interface LiveSyncState {
  uidvalidity: string;
  lastUid: number;
  cursor: string | null;
}

export const imapSync = {
  async state(db: Queryable, mailerId: string): Promise<LiveSyncState | null> {
    const { rows } = await db.query<{ uidvalidity: string; last_uid: string; cursor: string | null }>(
      'SELECT uidvalidity, last_uid, cursor FROM imap_sync_state WHERE mailer_id = $1',
      [mailerId],
    );
    const r = rows[0];
    return r ? { uidvalidity: r.uidvalidity, lastUid: Number(r.last_uid), cursor: r.cursor } : null;
  },
  async saveState(
    db: Queryable,
    tenantId: string,
    mailerId: string,
    uidvalidity: string,
    lastUid: number,
    cursor: string | null = null,
  ): Promise<void> {
    await db.query(
      `INSERT INTO imap_sync_state (mailer_id, tenant_id, uidvalidity, last_uid, cursor) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (mailer_id) DO UPDATE SET uidvalidity = $3, last_uid = $4, cursor = $5, updated_at = now()`,
      [mailerId, tenantId, uidvalidity, lastUid, cursor],
    );
  },
  /** Which of `messageIds` were already posted for the mailer (live sync skips fetching them). */
  async postedOf(db: Queryable, mailerId: string, messageIds: string[]): Promise<Set<string>> {
    if (messageIds.length === 0) return new Set();
    const { rows } = await db.query<{ message_id: string }>(
      'SELECT message_id FROM imap_sync_posted WHERE mailer_id = $1 AND message_id = ANY($2::text[])',
      [mailerId, messageIds],
    );
    return new Set(rows.map((r) => r.message_id));
  },
  /**
   * One new INBOX message seen by live sync, in one transaction: the first time its Message-ID
   * is seen for the mailer, `message` is written to the outbox (posted by the OutboxRelay if and
   * only if this commits); either way INBOX is marked read up to `uid` (IMAP; an API mailbox's
   * `cursor` is written as given). So each Message-ID is posted once, whatever replica sees it,
   * and a crash at any point neither loses nor repeats it. Returns true when it was posted.
   */
  async postNew(
    db: Db,
    p: {
      tenantId: string;
      mailerId: string;
      messageId: string;
      uidvalidity: string;
      uid: number;
      cursor?: string | null;
      message: MailerWebhookMessage;
    },
  ): Promise<boolean> {
    return db.transaction(async (tx) => {
      const claimed = await tx.query(
        'INSERT INTO imap_sync_posted (mailer_id, message_id) VALUES ($1, $2) ON CONFLICT DO NOTHING',
        [p.mailerId, p.messageId],
      );
      if (claimed.rowCount > 0)
        await writeOutbox(tx, BusMessages.mailerWebhook, p.message, { tenantId: p.tenantId });
      await tx.query(
        `INSERT INTO imap_sync_state (mailer_id, tenant_id, uidvalidity, last_uid, cursor) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (mailer_id) DO UPDATE SET uidvalidity = $3,
           last_uid = CASE WHEN imap_sync_state.uidvalidity = $3 THEN GREATEST(imap_sync_state.last_uid, $4) ELSE $4 END,
           cursor = $5, updated_at = now()`,
        [p.mailerId, p.tenantId, p.uidvalidity, p.uid, p.cursor ?? null],
      );
      return claimed.rowCount > 0;
    });
  },
};

/**
 * IMAP-capable mailers to watch: active, with an incoming webhook, and credentials: a password
 * (basic) or an OAuth grant (oauth_imap, smtp_imap: read through the Gmail API or Graph).
 */
export async function listWatchableImapMailers(
  db: Queryable,
): Promise<Array<{ tenantId: string; mailerId: string }>> {
  const { rows } = await db.query<{ tenant_id: string; id: string }>(
    `SELECT m.tenant_id, m.id FROM mailers m
      WHERE m.deleted_at IS NULL AND m.state = 'active' AND m.incoming_webhook IS NOT NULL
        AND ((m.connection_type = 'basic' AND m.config_type IN ('imap', 'basic_imap', 'smtp_imap') AND m.secret IS NOT NULL)
          OR (m.connection_type = 'oauth' AND m.config_type IN ('oauth_imap', 'smtp_imap')
            AND EXISTS (SELECT 1 FROM oauth_grants g WHERE g.mailer_id = m.id)))
      ORDER BY m.id`,
  );
  return rows.map((r) => ({ tenantId: r.tenant_id, mailerId: r.id }));
}
