/**
 * OAuth apps over the API: a tenant's own (stored with the secret sealed; the secret is never
 * returned) and, in the list, the deployment's apps from the environment (read-only: app ids
 * `google` and `microsoft`, which cannot be deleted).
 */
import {
  type CreateOAuthAppRequest,
  IdPrefix,
  type OAuthAppView,
  OAuthErrorText,
  newId,
} from '@mailyard/contracts';
import { type Db, HttpError, type Sealer, conflict, notFound } from '@mailyard/platform';
import { type ProviderSettings, deploymentApps, isDeploymentAppId } from '@mailyard/providers';
import { OAUTH_APPS_MAX, type StoredOAuthApp, oauthApps } from '@mailyard/store';

const view = (a: StoredOAuthApp): OAuthAppView => ({
  app_id: a.id,
  provider: a.provider,
  client_id: a.clientId,
  redirect_uri: a.redirectUri,
  directory_tenant: a.directoryTenant,
  source: 'tenant',
  created_at: a.createdAt.toISOString(),
});

export async function createApp(
  deps: { db: Db; sealer: Sealer },
  tenantId: string,
  input: CreateOAuthAppRequest,
): Promise<string> {
  const id = newId(IdPrefix.oauthApp);
  const created = await oauthApps.create(deps.db, deps.sealer, tenantId, {
    id,
    provider: input.provider,
    clientId: input.client_id,
    clientSecret: input.client_secret,
    redirectUri: input.redirect_uri ?? null,
    directoryTenant: input.provider === 'microsoft' ? (input.directory_tenant ?? 'common') : null,
  });
  if (!created) throw new HttpError(422, `An account may hold at most ${OAUTH_APPS_MAX} OAuth apps`);
  return id;
}

export async function listApps(
  db: Db,
  settings: ProviderSettings,
  tenantId: string,
): Promise<OAuthAppView[]> {
  const deployment: OAuthAppView[] = deploymentApps(settings).map((a) => ({
    app_id: a.appId,
    provider: a.provider,
    client_id: a.clientId,
    redirect_uri: a.redirectUri,
    directory_tenant: a.directoryTenant,
    source: 'deployment',
    created_at: null,
  }));
  return [...deployment, ...(await oauthApps.list(db, tenantId)).map(view)];
}

export async function deleteApp(db: Db, tenantId: string, appId: string): Promise<void> {
  if (isDeploymentAppId(appId)) throw new HttpError(422, OAuthErrorText.deploymentApp);
  const r = await oauthApps.delete(db, tenantId, appId);
  if (r === 'not_found') throw notFound(OAuthErrorText.appNotFound);
  if (r === 'in_use') throw conflict(OAuthErrorText.appInUse);
}
