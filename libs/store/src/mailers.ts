import type { ConfigType, MailerState, SmtpSecureMode } from '@mailyard/contracts';
import type { Db, Queryable, Sealer } from '@mailyard/platform';
import { type Page, type PageRequest, listPage } from './cursor';

/** Non-secret connection settings, stored as `mailers.config`. */
export interface MailerConnection {
  host: string;
  port: number;
  username: string;
  secure: SmtpSecureMode;
}

/** Non-secret settings of a SparkPost mailer, stored as `mailers.config` (the API key is sealed). */
export interface SparkPostSettings {
  /** The mailer's own API origin; absent: SPARKPOST_API_URL. */
  base_url?: string;
}

/** Stored incoming webhook without header values (those are sealed). */
export interface MailerWebhookInfo {
  url: string;
  method: string;
  headers_present: string[];
}

export interface StoredMailer {
  id: string;
  tenantId: string;
  configType: ConfigType;
  connectionType: 'basic' | 'oauth' | 'domain';
  name: string;
  email: string;
  state: MailerState;
  stateReason: string | null;
  /** Empty object for domain and OAuth mailers; SparkPostSettings for SparkPost mailers. */
  config: Partial<MailerConnection> & SparkPostSettings;
  /** The password (SMTP, IMAP) or API key (SparkPost) is stored. */
  passwordSet: boolean;
  /** SparkPost mailers: the username of their callback credentials (the password is only a digest). */
  callbackUsername: string | null;
  webhook: MailerWebhookInfo | null;
  /** Domain mailers only. */
  domain: { name: string; selector: string; verified: boolean } | null;
  /** OAuth mailers only: whose grant it holds (tokens never leave oauth-grants.ts). */
  oauth: {
    provider: 'google' | 'microsoft';
    appId: string;
    /** The account the grant belongs to (the mailer's `email` may have been renamed). */
    accountEmail: string;
    scopes: string[];
    accessExpiresAt: Date | null;
  } | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface NewMailer {
  id: string;
  configType: ConfigType;
  connectionType: 'basic' | 'oauth';
  name: string;
  email: string;
  config: MailerConnection | SparkPostSettings;
  /** The password (or API key), already sealed. */
  sealedSecret: Buffer;
  webhook?: { info: MailerWebhookInfo; sealedHeaders: Buffer | null } | null;
  /** Credentials a provider calls back with (SparkPost): the username and the password's digest. */
  callback?: { username: string; passwordDigest: Buffer };
}

export interface MailerPatch {
  name?: string;
  email?: string;
  config?: MailerConnection | SparkPostSettings;
  sealedSecret?: Buffer;
  /** null removes the webhook. */
  webhook?: { info: MailerWebhookInfo; sealedHeaders: Buffer | null } | null;
  /** Set when the new credentials were just verified: a deactivated mailer becomes active. */
  reauthenticated?: boolean;
}

type Row = {
  id: string;
  tenant_id: string;
  config_type: ConfigType;
  connection_type: 'basic' | 'oauth' | 'domain';
  name: string;
  email: string;
  state: MailerState;
  state_reason: string | null;
  config: Partial<MailerConnection> & SparkPostSettings;
  password_set: boolean;
  callback_username: string | null;
  incoming_webhook: MailerWebhookInfo | null;
  domain_name: string | null;
  domain_selector: string | null;
  domain_verified: boolean | null;
  oauth_provider: 'google' | 'microsoft' | null;
  oauth_app_id: string | null;
  oauth_account: string | null;
  oauth_scopes: string[] | null;
  oauth_expires_at: Date | null;
  created_at: Date;
  updated_at: Date;
};

const SELECT = `SELECT m.id, m.tenant_id, m.config_type, m.connection_type, m.name, m.email, m.state, m.state_reason,
    m.config, m.secret IS NOT NULL AS password_set, m.callback_username, m.incoming_webhook, d.name AS domain_name,
    d.selector AS domain_selector, d.verified AS domain_verified, g.provider AS oauth_provider,
    g.app_id AS oauth_app_id, g.account_email AS oauth_account, g.scopes AS oauth_scopes, g.access_expires_at AS oauth_expires_at,
    m.created_at, m.updated_at
  FROM mailers m LEFT JOIN domains d ON d.id = m.id LEFT JOIN oauth_grants g ON g.mailer_id = m.id`;

const toMailer = (r: Row): StoredMailer => ({
  id: r.id,
  tenantId: r.tenant_id,
  configType: r.config_type,
  connectionType: r.connection_type,
  name: r.name,
  email: r.email,
  state: r.state,
  stateReason: r.state_reason,
  config: r.config,
  passwordSet: r.password_set,
  callbackUsername: r.callback_username,
  webhook: r.incoming_webhook,
  domain:
    r.domain_name === null
      ? null
      : { name: r.domain_name, selector: r.domain_selector ?? '', verified: r.domain_verified === true },
  oauth:
    r.oauth_provider === null || r.oauth_app_id === null
      ? null
      : {
          provider: r.oauth_provider,
          appId: r.oauth_app_id,
          accountEmail: r.oauth_account ?? '',
          scopes: r.oauth_scopes ?? [],
          accessExpiresAt: r.oauth_expires_at,
        },
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

/** Mailer configurations, scoped to one tenant (another tenant's mailer behaves as absent). */
export const mailers = {
  async create(db: Queryable, tenantId: string, input: NewMailer): Promise<string> {
    await db.query(
      `INSERT INTO mailers (id, tenant_id, config_type, connection_type, name, email, config, secret,
         incoming_webhook, incoming_webhook_secret, callback_username, callback_password_digest)
       VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $9::jsonb, $10, $11, $12)`,
      [
        input.id,
        tenantId,
        input.configType,
        input.connectionType,
        input.name,
        input.email,
        JSON.stringify(input.config),
        input.sealedSecret,
        input.webhook ? JSON.stringify(input.webhook.info) : null,
        input.webhook?.sealedHeaders ?? null,
        input.callback?.username ?? null,
        input.callback?.passwordDigest ?? null,
      ],
    );
    return input.id;
  },

  async get(db: Queryable, tenantId: string, id: string): Promise<StoredMailer | null> {
    const { rows } = await db.query<Row>(
      `${SELECT} WHERE m.tenant_id = $1 AND m.id = $2 AND m.deleted_at IS NULL`,
      [tenantId, id],
    );
    return rows[0] ? toMailer(rows[0]) : null;
  },

  list(
    db: Queryable,
    tenantId: string,
    page: PageRequest,
  ): Promise<Page<StoredMailer> & { totalCount: number }> {
    const sql = {
      page: `${SELECT} WHERE m.tenant_id = $1 AND m.deleted_at IS NULL AND m.id > $2 ORDER BY m.id LIMIT $3`,
      count: 'SELECT count(*) AS n FROM mailers WHERE tenant_id = $1 AND deleted_at IS NULL',
    };
    return listPage(db, tenantId, page, sql, toMailer);
  },

  /** Decrypted password of a basic mailer (for re-authentication); null when absent. */
  async password(db: Queryable, sealer: Sealer, tenantId: string, id: string): Promise<string | null> {
    const { rows } = await db.query<{ secret: Uint8Array | null }>(
      'SELECT secret FROM mailers WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL',
      [tenantId, id],
    );
    return rows[0]?.secret ? sealer.openText(rows[0].secret) : null;
  },

  /** Applies the given fields; false when the mailer is absent. */
  async update(db: Queryable, tenantId: string, id: string, patch: MailerPatch): Promise<boolean> {
    const setWebhook = patch.webhook !== undefined;
    const res = await db.query(
      `UPDATE mailers SET
          name = COALESCE($3, name),
          email = COALESCE($4, email),
          config = COALESCE($5::jsonb, config),
          secret = COALESCE($6, secret),
          incoming_webhook = CASE WHEN $7 THEN $8::jsonb ELSE incoming_webhook END,
          incoming_webhook_secret = CASE WHEN $7 THEN $9::bytea ELSE incoming_webhook_secret END,
          state = CASE WHEN $10 AND state = 'deactivated' THEN 'active' ELSE state END,
          state_reason = CASE WHEN $10 AND state = 'deactivated' THEN NULL ELSE state_reason END,
          updated_at = now()
        WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL`,
      [
        tenantId,
        id,
        patch.name ?? null,
        patch.email ?? null,
        patch.config ? JSON.stringify(patch.config) : null,
        patch.sealedSecret ?? null,
        setWebhook,
        patch.webhook ? JSON.stringify(patch.webhook.info) : null,
        patch.webhook?.sealedHeaders ?? null,
        patch.reauthenticated === true,
      ],
    );
    return res.rowCount > 0;
  },

  /**
   * Manual state change (no event): moves to `to` only from one of `from`. Returns the state
   * before, or null when the mailer is absent.
   */
  async setStateManually(
    db: Db,
    tenantId: string,
    id: string,
    from: readonly MailerState[],
    to: MailerState,
  ): Promise<MailerState | null> {
    return db.transaction(async (tx) => {
      const { rows } = await tx.query<{ state: MailerState }>(
        'SELECT state FROM mailers WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL FOR UPDATE',
        [tenantId, id],
      );
      const before = rows[0]?.state;
      if (!before) return null;
      if (from.includes(before)) {
        await tx.query(
          'UPDATE mailers SET state = $3, state_reason = NULL, updated_at = now() WHERE tenant_id = $1 AND id = $2',
          [tenantId, id, to],
        );
      }
      return before;
    });
  },

  /**
   * Deletes a mailer (a domain mailer deletes its domain too). Rows stay, marked deleted, so sends
   * accepted before read the mailer as `deleted`; its secrets (password or API key, webhook headers,
   * callback password digest, DKIM key, OAuth grant) are wiped. False when absent.
   */
  async delete(db: Db, tenantId: string, id: string): Promise<boolean> {
    return db.transaction(async (tx) => {
      const res = await tx.query(
        `UPDATE mailers SET deleted_at = now(), updated_at = now(), secret = NULL, incoming_webhook_secret = NULL,
                callback_password_digest = NULL
          WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL`,
        [tenantId, id],
      );
      if (res.rowCount === 0) return false;
      await tx.query('DELETE FROM oauth_grants WHERE tenant_id = $1 AND mailer_id = $2', [tenantId, id]);
      await tx.query(
        `UPDATE domains SET deleted_at = now(), updated_at = now(), dkim_private_key = NULL, next_check_at = NULL
          WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL`,
        [tenantId, id],
      );
      return true;
    });
  },
};

/** The incoming webhook of a mailer with its header values unsealed (for the webhook dispatcher). */
export async function loadMailerWebhook(
  db: Queryable,
  sealer: Sealer,
  tenantId: string,
  mailerId: string,
): Promise<{ url: string; method: string; headers: Record<string, string> } | null> {
  const { rows } = await db.query<{
    incoming_webhook: MailerWebhookInfo | null;
    incoming_webhook_secret: Uint8Array | null;
  }>(
    'SELECT incoming_webhook, incoming_webhook_secret FROM mailers WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL',
    [tenantId, mailerId],
  );
  const hook = rows[0]?.incoming_webhook;
  if (!hook) return null;
  const secret = rows[0]?.incoming_webhook_secret;
  const headers = secret ? (JSON.parse(sealer.openText(secret)) as Record<string, string>) : {};
  return { url: hook.url, method: hook.method, headers };
}
