import type { OAuthProviderName } from '../api/oauth';
/**
 * The storage the OAuth token source needs (libs/providers oauth/access-tokens.ts), declared here
 * so that libs/providers never imports the store: libs/store implements it (oauthGrantStore(db,
 * sealer)) and each service passes that adapter in. Tokens cross this seam as plaintext; sealing
 * at rest is the implementation's business.
 */
import type { ConfigType, DeactivationReason, MailerState } from './types';

/** A grant as the token source reads it, tokens unsealed. */
export interface StoredOAuthGrant {
  mailerId: string;
  tenantId: string;
  configType: ConfigType;
  mailerState: MailerState;
  provider: OAuthProviderName;
  appId: string;
  accountEmail: string;
  scopes: string[];
  refreshToken: string | null;
  accessToken: string | null;
  accessExpiresAt: Date | null;
  version: number;
}

/** What a refresh (or a login) obtained. */
export interface GrantTokens {
  accessToken: string;
  /** null keeps the stored refresh token (a refresh that did not rotate it). */
  refreshToken: string | null;
  accessExpiresAt: Date;
  /** Granted scopes; null keeps the stored ones. */
  scopes: string[] | null;
}

/** A tenant's own OAuth app with its client secret unsealed (for token requests only). */
export interface OAuthAppSecrets {
  id: string;
  provider: OAuthProviderName;
  clientId: string;
  clientSecret: string;
  redirectUri: string | null;
  directoryTenant: string | null;
}

/** A tenant's own OAuth apps, by id (another tenant's id is unknown: null). */
export interface OAuthAppLookup {
  appSecrets(tenantId: string, appId: string): Promise<OAuthAppSecrets | null>;
}

export interface OAuthGrantStore extends OAuthAppLookup {
  /** The grant of a (not deleted) OAuth mailer; null when absent. */
  loadGrant(tenantId: string, mailerId: string): Promise<StoredOAuthGrant | null>;
  /** Stores a refresh's result over `fromVersion` only; false when another writer got there first. */
  saveRefreshedGrant(
    tenantId: string,
    mailerId: string,
    fromVersion: number,
    tokens: GrantTokens,
  ): Promise<boolean>;
  /** Marks the stored access token expired (the next token request refreshes). */
  expireAccessToken(tenantId: string, mailerId: string): Promise<void>;
  /**
   * Deactivates an active mailer and writes its MAILER_DEACTIVATED event in one transaction;
   * true when the mailer moved (false: already deactivated, disabled or gone).
   */
  deactivateMailer(
    tenantId: string,
    mailerId: string,
    reason: DeactivationReason,
    providerError: string,
  ): Promise<boolean>;
}
