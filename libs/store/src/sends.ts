import type { ConfigType, Content, MailerState, StoredSendRequest } from '@mailyard/contracts';
import { type OutboxRow, type Queryable, outboxInsertSql, outboxParams } from '@mailyard/platform';
import { type QueuedRecipient, queuedLogColumns } from './email-logs';

/** What a send holds, as accepted and as read back. */
export interface SendFields {
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

/** Parameters $1..$8 of a `sends` insert, in column order. */
function sendParams(s: NewSend): unknown[] {
  return [
    s.refId,
    s.tenantId,
    s.mailerId,
    s.campaignId,
    s.customArgs === null ? null : JSON.stringify(s.customArgs),
    JSON.stringify(s.request),
    s.idempotencyKey,
    s.requestHash,
  ];
}

/** What the gateway checks a sending mailer by (no secrets are unsealed). */
export type SendingMailerStatus = { configType: ConfigType; state: MailerState | 'deleted' } & (
  | { kind: 'domain'; domain: string; verified: boolean }
  | { kind: 'smtp' }
);

/** What accepting a send reads: its mailer (null = none of the tenant's) and template. */
export interface SendAcceptContext {
  mailer: SendingMailerStatus | null;
  /** Undefined when no template was named; null when the tenant has no such template. */
  template: { subject: string; content: Content[] } | null | undefined;
}

/** A message for the transactional outbox, built by libs/platform outboxMessage, written with the send. */
export type OutboxMessage = OutboxRow;

/**
 * The send, its QUEUED log rows and its outbox rows in one statement: the logs and outbox rows
 * are written only when the send row was (its idempotency key was free).
 */
const INSERT_ACCEPTED = `
WITH send AS (
  INSERT INTO sends (ref_id, tenant_id, mailer_id, campaign_id, custom_args, request, idempotency_key, request_hash)
  VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb, $7, $8)
  ON CONFLICT (tenant_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
  RETURNING ref_id
),
logs AS (
  INSERT INTO email_logs (id, ref_id, tenant_id, copy_id, recipient, recipient_domain, recipient_type, subject, mailer_id, campaign_id)
  SELECT u.id, send.ref_id, $2, u.copy_id, u.recipient, u.recipient_domain, u.recipient_type, $9, $3, $4
    FROM send, unnest($10::text[], $11::text[], $12::text[], $13::text[], $14::text[])
         AS u(id, copy_id, recipient, recipient_domain, recipient_type)
),
ob AS (
  ${outboxInsertSql('$15', '$16', '$17', 'send')}
)
SELECT count(*)::integer AS n FROM send`;

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
   * The mailer's status and the template (when `templateId` is given) in one round trip.
   * Deleted mailers are returned with state `deleted`.
   */
  async acceptContext(
    db: Queryable,
    tenantId: string,
    mailerId: string,
    templateId: string | undefined,
  ): Promise<SendAcceptContext> {
    const { rows } = await db.query<{
      config_type: ConfigType | null;
      state: MailerState;
      deleted: boolean;
      domain: string | null;
      verified: boolean | null;
      template_id: string | null;
      subject: string;
      content: Content[];
    }>(
      `SELECT m.config_type, m.state, m.deleted_at IS NOT NULL AS deleted, d.name AS domain, d.verified,
              t.id AS template_id, t.subject, t.content
         FROM (VALUES (1)) AS one (x)
         LEFT JOIN mailers m ON m.tenant_id = $1 AND m.id = $2
         LEFT JOIN domains d ON d.id = m.id
         LEFT JOIN templates t ON t.tenant_id = $1 AND t.id = $3`,
      [tenantId, mailerId, templateId ?? null],
    );
    const r = rows[0]!;
    let template: SendAcceptContext['template'];
    if (templateId !== undefined)
      template = r.template_id === null ? null : { subject: r.subject, content: r.content };
    if (r.config_type === null) return { mailer: null, template };
    const state = r.deleted ? 'deleted' : r.state;
    const mailer: SendingMailerStatus =
      r.config_type === 'domain'
        ? {
            kind: 'domain',
            configType: 'domain',
            state,
            domain: r.domain ?? '',
            verified: r.verified === true,
          }
        : { kind: 'smtp', configType: r.config_type, state };
    return { mailer, template };
  },

  /**
   * Inserts the send, one QUEUED `email_logs` row per recipient and the outbox messages in one
   * statement (atomic without a transaction). False, and nothing written, when the idempotency
   * key is held by another send of the tenant; a concurrent insert of the same key waits for the
   * other transaction and then reports false, so duplicates never both insert.
   */
  async insertAccepted(
    db: Queryable,
    s: NewSend,
    recipients: readonly QueuedRecipient[],
    outbox: readonly OutboxMessage[],
  ): Promise<boolean> {
    const { rows } = await db.query<{ n: number }>(INSERT_ACCEPTED, [
      ...sendParams(s),
      s.request.subject,
      ...queuedLogColumns(recipients),
      ...outboxParams(outbox),
    ]);
    return rows[0]?.n === 1;
  },
};
