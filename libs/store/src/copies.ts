/**
 * What the send service reads per command, in one round trip for any number of copies: the send
 * (its stored request only when asked for: the service caches requests), the copy's recipients
 * (email_logs rows), the events already recorded for the copy (from which it derives which
 * recipients are finished and whether this attempt was already recorded), a fingerprint of the
 * mailer and the copy's suppressed recipients (the store's one suppression rule,
 * suppressedKeysSql). Also the copies still unfinished after a crash (embedded mode).
 */
import type { RecipientType } from '@mailyard/contracts';
import type { Queryable } from '@mailyard/platform';
import { addressKeySql, suppressedKeysSql } from './suppressions';

export interface CopyKey {
  ref_id: string;
  tenant_id: string;
  copy_id: string;
}

export interface CopyRow {
  /** Index of the key in the request. */
  k: number;
  ref_id: string;
  tenant_id: string;
  mailer_id: string;
  campaign_id: string | null;
  custom_args: Record<string, unknown> | null;
  /** The stored request as JSON text; null unless asked for. */
  request: string | null;
  /** `accepted`: an API provider accepted the recipient and reports by callback (provider-acceptance.ts). */
  recipients: Array<{
    id: string;
    recipient: string;
    type: RecipientType;
    status: string;
    accepted: boolean;
  }>;
  /**
   * Fingerprint of every mailer/domain column the send service depends on (state, deletion,
   * verification, config, secrets, key, selector); null when the mailer does not exist.
   */
  mailer_version: string | null;
  /** The copy's recipients the tenant suppressed, as address keys (lowercase). */
  suppressed: string[];
  events: Array<{
    event: string;
    attempt: number;
    email: string[] | null;
    retry_scheduled: boolean | null;
    failed_reason: string | null;
    provider_error: string | null;
  }>;
}

const COPY_RECIPIENTS =
  'SELECT l.recipient FROM email_logs l WHERE l.copy_id = w.copy_id AND l.tenant_id = w.tenant_id';

const LOAD_SQL = `
WITH want AS (
  SELECT * FROM unnest($1::int[], $2::text[], $3::text[], $4::text[], $5::boolean[]) AS w(k, ref_id, tenant_id, copy_id, with_request)
)
SELECT w.k, s.ref_id, s.tenant_id, s.mailer_id, s.campaign_id, s.custom_args,
       CASE WHEN w.with_request THEN s.request::text END AS request,
       COALESCE((SELECT json_agg(json_build_object('id', l.id, 'recipient', l.recipient, 'type', l.recipient_type,
                                                   'status', l.status,
                                                   'accepted', l.provider_accepted_at IS NOT NULL) ORDER BY l.id)
                   FROM email_logs l WHERE l.copy_id = w.copy_id AND l.tenant_id = w.tenant_id), '[]'::json) AS recipients,
       COALESCE((SELECT json_agg(json_build_object('event', e.event, 'attempt', e.attempt,
                                                   'email', e.payload->'details'->'email',
                                                   'retry_scheduled', e.payload->'details'->'retry_scheduled',
                                                   'failed_reason', e.payload->'details'->>'failed_reason',
                                                   'provider_error', e.payload->'details'->>'provider_error') ORDER BY e.id)
                   FROM email_events e WHERE e.copy_id = w.copy_id AND e.attempt > 0), '[]'::json) AS events,
       (SELECT md5(concat_ws('|', m.state, m.deleted_at, m.updated_at, m.config::text, md5(m.secret),
                             d.name, d.verified, d.deleted_at, d.updated_at, d.selector, md5(d.dkim_private_key)))
          FROM mailers m LEFT JOIN domains d ON d.id = m.id
         WHERE m.id = s.mailer_id AND m.tenant_id = s.tenant_id) AS mailer_version,
       ARRAY(${suppressedKeysSql('s.tenant_id', `ARRAY(${COPY_RECIPIENTS.replace('SELECT l.recipient', `SELECT ${addressKeySql('l.recipient')}`)})`)}) AS suppressed
  FROM want w
  -- Each key's send by its primary key (LIMIT 1 keeps this a per-key index lookup: as a join,
  -- the planner read every row of a small or freshly grown sends table to hash it, for each
  -- command; docs/scaling.md).
  CROSS JOIN LATERAL (
    SELECT * FROM sends s WHERE s.ref_id = w.ref_id AND s.tenant_id = w.tenant_id LIMIT 1
  ) s`;

/**
 * Loads the copies `keys` in one query (the stored request only where `withRequest[i]`); a
 * copy of a send that does not exist (or is another tenant's) has no row.
 */
export async function loadCopyRows(
  db: Queryable,
  keys: readonly CopyKey[],
  withRequest: readonly boolean[],
): Promise<CopyRow[]> {
  const { rows } = await db.query<CopyRow>(LOAD_SQL, [
    keys.map((_, i) => i),
    keys.map((k) => k.ref_id),
    keys.map((k) => k.tenant_id),
    keys.map((k) => k.copy_id),
    withRequest,
  ]);
  return rows;
}

/**
 * Every copy with recipients still without a send outcome (and not accepted by an API provider
 * that reports by callback), with the last send attempt recorded for it (0 when none): what an
 * in-process bus lost in a crash. A SCHEDULED copy is not one: it is still held
 * (scheduled-sends.ts), and its release commands it.
 */
export async function findUnfinishedCopies(
  db: Queryable,
): Promise<Array<CopyKey & { last_attempt: number }>> {
  const { rows } = await db.query<CopyKey & { last_attempt: number }>(
    `SELECT l.ref_id, l.tenant_id, l.copy_id,
            COALESCE((SELECT max(e.attempt) FROM email_events e WHERE e.copy_id = l.copy_id), 0)::int AS last_attempt
       FROM email_logs l
      WHERE l.send_outcome IS NULL AND l.provider_accepted_at IS NULL AND l.status <> 'SCHEDULED'
      GROUP BY l.ref_id, l.tenant_id, l.copy_id`,
  );
  return rows;
}
