/**
 * The tenants' own OAuth apps (POST/GET/DELETE /v1/oauth/apps, docs/oauth.md): client id, sealed
 * client secret, redirect URI, Microsoft directory. Every query names the tenant, so another
 * tenant's app reads as absent. An app some mailer's grant names cannot be deleted (the grant
 * could no longer be refreshed); the check and the delete share one transaction with the row
 * locked, and connectOAuthMailer takes the same lock, so neither can slip past the other.
 */
import type { OAuthAppSecrets, OAuthProviderName } from '@mailyard/contracts';
import type { Db, Queryable, Sealer } from '@mailyard/platform';

export interface StoredOAuthApp {
  id: string;
  tenantId: string;
  provider: OAuthProviderName;
  clientId: string;
  redirectUri: string | null;
  directoryTenant: string | null;
  createdAt: Date;
}

/** An app with its client secret unsealed (for token requests only; never returned by the API). */
export interface OAuthAppCredentials extends StoredOAuthApp {
  clientSecret: string;
}

/** A new app: the same fields the token source reads back (OAuthAppSecrets, libs/contracts). */
export type NewOAuthApp = OAuthAppSecrets;

type Row = {
  id: string;
  tenant_id: string;
  provider: OAuthProviderName;
  client_id: string;
  redirect_uri: string | null;
  directory_tenant: string | null;
  created_at: Date;
};

const COLUMNS = 'id, tenant_id, provider, client_id, redirect_uri, directory_tenant, created_at';

const toApp = (r: Row): StoredOAuthApp => ({
  id: r.id,
  tenantId: r.tenant_id,
  provider: r.provider,
  clientId: r.client_id,
  redirectUri: r.redirect_uri,
  directoryTenant: r.directory_tenant,
  createdAt: r.created_at,
});

/** Apps a tenant may hold (they are few; the list is not paged). */
export const OAUTH_APPS_MAX = 100;

export type OAuthAppDeletion = 'deleted' | 'not_found' | 'in_use';

export const oauthApps = {
  /** Stores the app with its secret sealed; false when the tenant already holds OAUTH_APPS_MAX apps. */
  async create(db: Db, sealer: Sealer, tenantId: string, app: NewOAuthApp): Promise<boolean> {
    return db.transaction(async (tx) => {
      // Serialises creates of one tenant so the cap holds under concurrency.
      await tx.query('SELECT id FROM tenants WHERE id = $1 FOR UPDATE', [tenantId]);
      const { rows } = await tx.query<{ n: string }>(
        'SELECT count(*) AS n FROM oauth_apps WHERE tenant_id = $1',
        [tenantId],
      );
      if (Number(rows[0]?.n ?? 0) >= OAUTH_APPS_MAX) return false;
      await tx.query(
        `INSERT INTO oauth_apps (id, tenant_id, provider, client_id, client_secret, redirect_uri, directory_tenant)
         VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        [
          app.id,
          tenantId,
          app.provider,
          app.clientId,
          sealer.seal(app.clientSecret),
          app.redirectUri,
          app.directoryTenant,
        ],
      );
      return true;
    });
  },

  async list(db: Queryable, tenantId: string): Promise<StoredOAuthApp[]> {
    const { rows } = await db.query<Row>(
      `SELECT ${COLUMNS} FROM oauth_apps WHERE tenant_id = $1 ORDER BY id LIMIT $2`,
      [tenantId, OAUTH_APPS_MAX],
    );
    return rows.map(toApp);
  },

  /** The app with its secret unsealed, or null (unknown, or another tenant's). */
  async credentials(
    db: Queryable,
    sealer: Sealer,
    tenantId: string,
    id: string,
  ): Promise<OAuthAppCredentials | null> {
    const { rows } = await db.query<Row & { client_secret: Uint8Array }>(
      `SELECT ${COLUMNS}, client_secret FROM oauth_apps WHERE tenant_id = $1 AND id = $2`,
      [tenantId, id],
    );
    const row = rows[0];
    return row ? { ...toApp(row), clientSecret: sealer.openText(row.client_secret) } : null;
  },

  /** Deletes the app unless a mailer's grant names it. */
  async delete(db: Db, tenantId: string, id: string): Promise<OAuthAppDeletion> {
    return db.transaction(async (tx) => {
      const { rows } = await tx.query(
        'SELECT id FROM oauth_apps WHERE tenant_id = $1 AND id = $2 FOR UPDATE',
        [tenantId, id],
      );
      if (rows.length === 0) return 'not_found';
      const used = await tx.query('SELECT 1 FROM oauth_grants WHERE tenant_id = $1 AND app_id = $2 LIMIT 1', [
        tenantId,
        id,
      ]);
      if (used.rows.length > 0) return 'in_use';
      await tx.query('DELETE FROM oauth_apps WHERE tenant_id = $1 AND id = $2', [tenantId, id]);
      return 'deleted';
    });
  },
};
