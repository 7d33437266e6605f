import {
  type ConfigType,
  type Content,
  type MailerState,
  type StoredSendRequest,
  domainOf,
} from '@mailyard/contracts';
import { type OutboxRow, type Queryable, outboxInsertSql, outboxParams } from '@mailyard/platform';
import { type QueuedRecipient, queuedLogColumns } from './email-logs';
import { type OpenPause, toOpenPause } from './reputation';
import { statsRollupUpsertSql } from './stats-rollup-sql';

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
  /** An open pause of the From domain or the mailer (reputation.ts), read in the same round trip. */
  pause: OpenPause | null;
}

/** A message for the transactional outbox, built by libs/platform outboxMessage, written with the send. */
export type OutboxMessage = OutboxRow;

/**
 * The stats dimension `domain` of a send: its From address's domain, lowercased ('' for a stored
 * request without one: only hand-made requests of tests and tools lack it).
 */
export const sendingDomainOf = (s: SendFields): string => {
  const from = (s.request as Partial<StoredSendRequest>).from?.email;
  return from ? domainOf(from).toLowerCase() : '';
};

/**
 * The stats rollups' `requested`: one per log row inserted by the statement's `logs` CTE (which
 * returns tenant_id, sending_domain, mailer_id, campaign_id), in the hour of the transaction.
 */
const REQUESTED = statsRollupUpsertSql(
  `SELECT tenant_id, date_trunc('hour', now(), 'UTC') AS bucket, sending_domain AS domain, mailer_id,
          COALESCE(campaign_id, '') AS campaign_id, count(*) AS requested
     FROM logs GROUP BY tenant_id, sending_domain, mailer_id, campaign_id`,
  ['requested'],
);

/**
 * The send, its QUEUED log rows, its outbox rows and its stats `requested` in one statement:
 * the logs and outbox rows are written only when the send row was (its idempotency key was free).
 */
const INSERT_ACCEPTED = `
WITH send AS (
  INSERT INTO sends (ref_id, tenant_id, mailer_id, campaign_id, custom_args, request, idempotency_key, request_hash)
  VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb, $7, $8)
  ON CONFLICT (tenant_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
  RETURNING ref_id
),
logs AS (
  INSERT INTO email_logs (id, ref_id, tenant_id, copy_id, recipient, recipient_domain, recipient_type, subject, mailer_id, campaign_id, sending_domain)
  SELECT u.id, send.ref_id, $2, u.copy_id, u.recipient, u.recipient_domain, u.recipient_type, $9, $3, $4, $18
    FROM send, unnest($10::text[], $11::text[], $12::text[], $13::text[], $14::text[])
         AS u(id, copy_id, recipient, recipient_domain, recipient_type)
  RETURNING tenant_id, sending_domain, mailer_id, campaign_id
),
ob AS (
  ${outboxInsertSql('$15', '$16', '$17', 'send')}
),
stats AS (
  ${REQUESTED}
)
SELECT count(*)::integer AS n FROM send`;

/** One send of a group commit: the send, its QUEUED log rows and its own outbox rows. */
export interface AcceptedSendRows {
  send: SendFields;
  recipients: readonly QueuedRecipient[];
  outbox: readonly OutboxMessage[];
}

/**
 * Any number of sends without idempotency keys, their log rows and their outbox rows in one
 * statement (the gateway's group commit): log rows name their send by its position in the input.
 */
const INSERT_ACCEPTED_BATCH = `
WITH input AS (
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::jsonb[], $6::jsonb[], $7::text[], $17::text[])
    WITH ORDINALITY AS i(ref_id, tenant_id, mailer_id, campaign_id, custom_args, request, subject, sending_domain, n)
),
send AS (
  INSERT INTO sends (ref_id, tenant_id, mailer_id, campaign_id, custom_args, request)
  SELECT ref_id, tenant_id, mailer_id, campaign_id, custom_args, request FROM input ORDER BY n
),
logs AS (
  INSERT INTO email_logs (id, ref_id, tenant_id, copy_id, recipient, recipient_domain, recipient_type, subject, mailer_id, campaign_id, sending_domain)
  SELECT u.id, i.ref_id, i.tenant_id, u.copy_id, u.recipient, u.recipient_domain, u.recipient_type, i.subject, i.mailer_id, i.campaign_id, i.sending_domain
    FROM unnest($8::int[], $9::text[], $10::text[], $11::text[], $12::text[], $13::text[])
         AS u(n, id, copy_id, recipient, recipient_domain, recipient_type)
    JOIN input i ON i.n = u.n
  RETURNING tenant_id, sending_domain, mailer_id, campaign_id
),
ob AS (
  ${outboxInsertSql('$14', '$15', '$16')}
),
stats AS (
  ${REQUESTED}
)
SELECT count(*)::integer AS n FROM input`;

/** What acceptContexts reads for one send. */
export interface AcceptContextKey {
  tenantId: string;
  mailerId: string;
  templateId: string | undefined;
  /** The send's From domain: an open pause of it (or of the mailer) refuses the send. */
  fromDomain?: string;
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
   * The mailer's status and the template (when `templateId` is given) in one round trip.
   * Deleted mailers are returned with state `deleted`.
   */
  async acceptContext(
    db: Queryable,
    tenantId: string,
    mailerId: string,
    templateId: string | undefined,
    fromDomain?: string,
  ): Promise<SendAcceptContext> {
    return (await sends.acceptContexts(db, [{ tenantId, mailerId, templateId, fromDomain }]))[0]!;
  },

  /** acceptContext for any number of sends in one round trip (the gateway's group commit); in order. */
  async acceptContexts(db: Queryable, keys: readonly AcceptContextKey[]): Promise<SendAcceptContext[]> {
    const { rows } = await db.query<{
      k: number;
      config_type: ConfigType | null;
      state: MailerState;
      deleted: boolean;
      domain: string | null;
      verified: boolean | null;
      template_id: string | null;
      subject: string;
      content: Content[];
      pause: (Omit<Parameters<typeof toOpenPause>[0], 'paused_at'> & { paused_at: string }) | null;
    }>(
      `SELECT w.k, m.config_type, m.state, m.deleted_at IS NOT NULL AS deleted, d.name AS domain, d.verified,
              t.id AS template_id, t.subject, t.content, p.pause
         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) WITH ORDINALITY
              AS w (tenant_id, mailer_id, template_id, from_domain, k)
         LEFT JOIN mailers m ON m.tenant_id = w.tenant_id AND m.id = w.mailer_id
         LEFT JOIN domains d ON d.id = m.id
         LEFT JOIN templates t ON t.tenant_id = w.tenant_id AND t.id = w.template_id
         LEFT JOIN LATERAL (
           SELECT to_jsonb(sp) AS pause FROM (
             SELECT scope, key, metric, rate, window_n, threshold, paused_at FROM sending_pauses
              WHERE tenant_id = w.tenant_id AND resumed_at IS NULL
                AND ((scope = 'domain' AND key = w.from_domain) OR (scope = 'mailer' AND key = w.mailer_id))
              ORDER BY scope LIMIT 1) sp
         ) p ON true`,
      [
        keys.map((k) => k.tenantId),
        keys.map((k) => k.mailerId),
        keys.map((k) => k.templateId ?? null),
        keys.map((k) => k.fromDomain?.toLowerCase() ?? null),
      ],
    );
    const out: SendAcceptContext[] = [];
    for (const r of rows) {
      const templateId = keys[r.k - 1]!.templateId;
      let template: SendAcceptContext['template'];
      if (templateId !== undefined)
        template = r.template_id === null ? null : { subject: r.subject, content: r.content };
      const state = r.deleted ? 'deleted' : r.state;
      const mailer: SendingMailerStatus | null =
        r.config_type === null
          ? null
          : r.config_type === 'domain'
            ? {
                kind: 'domain',
                configType: 'domain',
                state,
                domain: r.domain ?? '',
                verified: r.verified === true,
              }
            : { kind: 'smtp', configType: r.config_type, state };
      const pause = r.pause ? toOpenPause({ ...r.pause, paused_at: new Date(r.pause.paused_at) }) : null;
      out[r.k - 1] = { mailer, template, pause };
    }
    return out;
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
      sendingDomainOf(s),
    ]);
    return rows[0]?.n === 1;
  },

  /**
   * Inserts sends without idempotency keys (see AcceptedSendRows) in ONE statement: all of
   * them or, when it fails, none (atomic without a transaction). `shared`: outbox rows of the
   * batch as a whole (commands naming copies of several of its sends), after the sends' own.
   */
  async insertAcceptedBatch(
    db: Queryable,
    batch: readonly AcceptedSendRows[],
    shared: readonly OutboxMessage[] = [],
  ): Promise<void> {
    if (batch.length === 0) return;
    const col = <T>(f: (b: AcceptedSendRows) => T) => batch.map(f);
    const owners = batch.flatMap((b, i) => b.recipients.map(() => i + 1));
    const recipients = batch.flatMap((b) => b.recipients);
    await db.query(INSERT_ACCEPTED_BATCH, [
      col((b) => b.send.refId),
      col((b) => b.send.tenantId),
      col((b) => b.send.mailerId),
      col((b) => b.send.campaignId),
      col((b) => (b.send.customArgs === null ? null : JSON.stringify(b.send.customArgs))),
      col((b) => JSON.stringify(b.send.request)),
      col((b) => b.send.request.subject),
      owners,
      ...queuedLogColumns(recipients),
      ...outboxParams([...batch.flatMap((b) => b.outbox), ...shared]),
      col((b) => sendingDomainOf(b.send)),
    ]);
  },
};
