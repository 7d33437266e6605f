/**
 * The store side of the OAuth token source's storage seam (OAuthGrantStore, libs/contracts):
 * grants (oauth-grants.ts), tenant apps (oauth-apps.ts) and the automatic deactivation
 * (mailer-activity.ts), bound to one database and sealer. Services build it and pass it to
 * libs/providers, which never imports the store.
 */
import type { OAuthGrantStore } from '@mailyard/contracts';
import type { Db, Sealer } from '@mailyard/platform';
import { deactivateMailer } from './mailer-activity';
import { oauthApps } from './oauth-apps';
import { expireOAuthAccessToken, loadOAuthGrant, saveRefreshedGrant } from './oauth-grants';

export function oauthGrantStore(db: Db, sealer: Sealer): OAuthGrantStore {
  return {
    loadGrant: (tenantId, mailerId) => loadOAuthGrant(db, sealer, tenantId, mailerId),
    saveRefreshedGrant: (tenantId, mailerId, fromVersion, tokens) =>
      saveRefreshedGrant(db, sealer, tenantId, mailerId, fromVersion, tokens),
    expireAccessToken: (tenantId, mailerId) => expireOAuthAccessToken(db, tenantId, mailerId),
    deactivateMailer: async (tenantId, mailerId, reason, providerError) =>
      (await deactivateMailer(db, tenantId, mailerId, reason, providerError)) === 'changed',
    appSecrets: (tenantId, appId) => oauthApps.credentials(db, sealer, tenantId, appId),
  };
}
