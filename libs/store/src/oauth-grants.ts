/**
 * The OAuth grant of each OAuth mailer (docs/oauth.md): provider, app, account email, granted
 * scopes and the sealed refresh and access tokens with the access token's expiry. Tokens go in
 * and come out as plaintext strings only through these functions, which seal and unseal them, so
 * no caller handles sealed bytes and nothing else reads the columns.
 *
 * - connectOAuthMailer: the login/callback result, in one transaction: a new mailer with its
 *   grant, or an existing one updated (a deactivated one becomes active again, no event: a
 *   successful re-authentication re-activates; docs/oauth.md "Login and callback").
 * - loadOAuthGrant / saveRefreshedGrant: the token source's read and its versioned write (a
 *   refresh stores its result only over the version it read: two writers never interleave).
 */
import type {
  ConfigType,
  GrantTokens,
  MailerState,
  OAuthProviderName,
  StoredOAuthGrant,
} from '@mailyard/contracts';
import type { Db, Queryable, Sealer } from '@mailyard/platform';

export interface OAuthConnection {
  provider: OAuthProviderName;
  appId: string;
  /** True when appId is a tenant app (an oauth_apps row, locked against a concurrent delete). */
  tenantApp: boolean;
  accountEmail: string;
  tokens: GrantTokens & { refreshToken: string; scopes: string[] };
}

export interface NewOAuthMailer extends OAuthConnection {
  id: string;
  configType: ConfigType;
  name: string;
}

export type ConnectResult =
  | { outcome: 'created'; mailerId: string }
  | { outcome: 'updated'; mailerId: string; reactivated: boolean }
  | { outcome: 'not_found' | 'app_not_found' };

async function lockApp(tx: Queryable, tenantId: string, c: OAuthConnection): Promise<boolean> {
  if (!c.tenantApp) return true;
  const { rows } = await tx.query('SELECT id FROM oauth_apps WHERE tenant_id = $1 AND id = $2 FOR SHARE', [
    tenantId,
    c.appId,
  ]);
  return rows.length > 0;
}

async function writeGrant(
  tx: Queryable,
  sealer: Sealer,
  tenantId: string,
  mailerId: string,
  c: OAuthConnection,
): Promise<void> {
  await tx.query(
    `INSERT INTO oauth_grants (mailer_id, tenant_id, provider, app_id, account_email, scopes, refresh_token,
       access_token, access_expires_at)
     VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8, $9)
     ON CONFLICT (mailer_id) DO UPDATE SET provider = EXCLUDED.provider, app_id = EXCLUDED.app_id,
       account_email = EXCLUDED.account_email, scopes = EXCLUDED.scopes, refresh_token = EXCLUDED.refresh_token,
       access_token = EXCLUDED.access_token, access_expires_at = EXCLUDED.access_expires_at,
       version = oauth_grants.version + 1, updated_at = now()`,
    [
      mailerId,
      tenantId,
      c.provider,
      c.appId,
      c.accountEmail,
      JSON.stringify(c.tokens.scopes),
      sealer.seal(c.tokens.refreshToken),
      sealer.seal(c.tokens.accessToken),
      c.tokens.accessExpiresAt,
    ],
  );
}

/** Creates an OAuth mailer with its grant (one transaction). */
export async function createOAuthMailer(
  db: Db,
  sealer: Sealer,
  tenantId: string,
  m: NewOAuthMailer,
): Promise<ConnectResult> {
  return db.transaction(async (tx) => {
    if (!(await lockApp(tx, tenantId, m))) return { outcome: 'app_not_found' };
    await tx.query(
      `INSERT INTO mailers (id, tenant_id, config_type, connection_type, name, email)
       VALUES ($1, $2, $3, 'oauth', $4, $5)`,
      [m.id, tenantId, m.configType, m.name, m.accountEmail],
    );
    await writeGrant(tx, sealer, tenantId, m.id, m);
    return { outcome: 'created', mailerId: m.id };
  });
}

/**
 * Replaces the grant of an existing OAuth mailer (re-authentication): the mailer's email follows
 * the account, and a deactivated mailer becomes active (no event). A disabled one stays disabled.
 */
export async function reconnectOAuthMailer(
  db: Db,
  sealer: Sealer,
  tenantId: string,
  mailerId: string,
  c: OAuthConnection,
): Promise<ConnectResult> {
  return db.transaction(async (tx) => {
    const { rows } = await tx.query<{ state: MailerState }>(
      `SELECT state FROM mailers WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL
         AND connection_type = 'oauth' FOR UPDATE`,
      [tenantId, mailerId],
    );
    const before = rows[0]?.state;
    if (!before) return { outcome: 'not_found' };
    if (!(await lockApp(tx, tenantId, c))) return { outcome: 'app_not_found' };
    await tx.query(
      `UPDATE mailers SET email = $3, updated_at = now(),
          state = CASE WHEN state = 'deactivated' THEN 'active' ELSE state END,
          state_reason = CASE WHEN state = 'deactivated' THEN NULL ELSE state_reason END
        WHERE tenant_id = $1 AND id = $2`,
      [tenantId, mailerId, c.accountEmail],
    );
    await writeGrant(tx, sealer, tenantId, mailerId, c);
    return { outcome: 'updated', mailerId, reactivated: before === 'deactivated' };
  });
}

type GrantRow = {
  mailer_id: string;
  tenant_id: string;
  config_type: ConfigType;
  state: MailerState;
  provider: OAuthProviderName;
  app_id: string;
  account_email: string;
  scopes: string[];
  refresh_token: Uint8Array | null;
  access_token: Uint8Array | null;
  access_expires_at: Date | null;
  version: string | number;
};

/** The grant of a (not deleted) OAuth mailer with its tokens unsealed; null when absent. */
export async function loadOAuthGrant(
  db: Queryable,
  sealer: Sealer,
  tenantId: string,
  mailerId: string,
): Promise<StoredOAuthGrant | null> {
  const { rows } = await db.query<GrantRow>(
    `SELECT g.mailer_id, g.tenant_id, m.config_type, m.state, g.provider, g.app_id, g.account_email, g.scopes,
        g.refresh_token, g.access_token, g.access_expires_at, g.version
      FROM oauth_grants g JOIN mailers m ON m.id = g.mailer_id
      WHERE g.tenant_id = $1 AND g.mailer_id = $2 AND m.tenant_id = $1 AND m.deleted_at IS NULL`,
    [tenantId, mailerId],
  );
  const r = rows[0];
  if (!r) return null;
  return {
    mailerId: r.mailer_id,
    tenantId: r.tenant_id,
    configType: r.config_type,
    mailerState: r.state,
    provider: r.provider,
    appId: r.app_id,
    accountEmail: r.account_email,
    scopes: r.scopes,
    refreshToken: r.refresh_token ? sealer.openText(r.refresh_token) : null,
    accessToken: r.access_token ? sealer.openText(r.access_token) : null,
    accessExpiresAt: r.access_expires_at,
    version: Number(r.version),
  };
}

/**
 * Stores a refresh's result over `fromVersion` only (false when another writer, or a
 * re-authentication, got there first: the caller reads the grant again).
 */
export async function saveRefreshedGrant(
  db: Queryable,
  sealer: Sealer,
  tenantId: string,
  mailerId: string,
  fromVersion: number,
  t: GrantTokens,
): Promise<boolean> {
  const res = await db.query(
    `UPDATE oauth_grants SET access_token = $4, access_expires_at = $5,
        refresh_token = COALESCE($6, refresh_token), scopes = COALESCE($7::jsonb, scopes),
        version = version + 1, updated_at = now()
      WHERE tenant_id = $1 AND mailer_id = $2 AND version = $3`,
    [
      tenantId,
      mailerId,
      fromVersion,
      sealer.seal(t.accessToken),
      t.accessExpiresAt,
      t.refreshToken === null ? null : sealer.seal(t.refreshToken),
      t.scopes === null ? null : JSON.stringify(t.scopes),
    ],
  );
  return res.rowCount > 0;
}

/**
 * Marks the stored access token as expired (a provider API refused it before its expiry): the
 * next token request refreshes, and a revoked grant then deactivates the mailer.
 */
export async function expireOAuthAccessToken(
  db: Queryable,
  tenantId: string,
  mailerId: string,
): Promise<void> {
  await db.query(
    `UPDATE oauth_grants SET access_expires_at = to_timestamp(0), version = version + 1, updated_at = now()
      WHERE tenant_id = $1 AND mailer_id = $2`,
    [tenantId, mailerId],
  );
}
