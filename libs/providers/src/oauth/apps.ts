/**
 * Which OAuth app an app id names: a tenant's own (oauth_apps, secret unsealed here) or one of
 * the deployment's apps configured by environment (app ids `google` and `microsoft`:
 * GOOGLE_CLIENT_ID/SECRET, MICROSOFT_CLIENT_ID/SECRET/TENANT). Another tenant's app id is
 * unknown (null), like any id that names nothing.
 */
import { DEPLOYMENT_APP_IDS, type OAuthAppLookup, type OAuthProviderName } from '@mailyard/contracts';
import type { ProviderSettings } from '../settings';
import type { OAuthAppConfig } from './client';

/** The deployment's apps that are configured (both id and secret set). */
export function deploymentApps(s: ProviderSettings): OAuthAppConfig[] {
  const apps: OAuthAppConfig[] = [];
  if (s.GOOGLE_CLIENT_ID && s.GOOGLE_CLIENT_SECRET)
    apps.push({
      appId: DEPLOYMENT_APP_IDS.google,
      provider: 'google',
      clientId: s.GOOGLE_CLIENT_ID,
      clientSecret: s.GOOGLE_CLIENT_SECRET,
      redirectUri: s.OAUTH_REDIRECT_URI ?? null,
      directoryTenant: null,
      tenantApp: false,
    });
  if (s.MICROSOFT_CLIENT_ID && s.MICROSOFT_CLIENT_SECRET)
    apps.push({
      appId: DEPLOYMENT_APP_IDS.microsoft,
      provider: 'microsoft',
      clientId: s.MICROSOFT_CLIENT_ID,
      clientSecret: s.MICROSOFT_CLIENT_SECRET,
      redirectUri: s.OAUTH_REDIRECT_URI ?? null,
      directoryTenant: s.MICROSOFT_TENANT,
      tenantApp: false,
    });
  return apps;
}

export function isDeploymentAppId(appId: string): appId is OAuthProviderName {
  return Object.values(DEPLOYMENT_APP_IDS).includes(appId);
}

export interface AppLookupDeps {
  /** The tenants' own apps (libs/store oauthGrantStore). */
  apps: OAuthAppLookup;
  settings: ProviderSettings;
}

/** The app `appId` names for `tenantId`, or null. */
export async function resolveOAuthApp(
  deps: AppLookupDeps,
  tenantId: string,
  appId: string,
): Promise<OAuthAppConfig | null> {
  if (isDeploymentAppId(appId)) return deploymentApps(deps.settings).find((a) => a.appId === appId) ?? null;
  const app = await deps.apps.appSecrets(tenantId, appId);
  if (!app) return null;
  return {
    appId: app.id,
    provider: app.provider,
    clientId: app.clientId,
    clientSecret: app.clientSecret,
    redirectUri: app.redirectUri,
    directoryTenant: app.directoryTenant,
    tenantApp: true,
  };
}
