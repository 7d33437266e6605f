export * from './oauth/types';
export * from './api';
export * from './gmail';
export * from './graph';
export * from './imap';
export * from './smtp';
export * from './sparkpost';
export * from './credential-check';
export * from './settings';
export {
  oauthAccessTokens,
  type MailerTokenSource,
  type OAuthAccessTokens,
  type OAuthAccessTokensDeps,
} from './oauth/access-tokens';
export { OAuthAppRejectedError, OAuthGrantNotFoundError, OAuthRequestError } from './oauth/errors';
export type { OAuthAppConfig, OAuthClient, TokenGrant, ConsentRequest } from './oauth/client';
export { oauthClientFor } from './oauth/oauth-client';
export { deploymentApps, isDeploymentAppId, resolveOAuthApp } from './oauth/apps';
export { StateSigner, type OAuthState, type StateCheck } from './oauth/state';
export { newPkce, codeChallengeOf, type PkcePair } from './oauth/pkce';
export { apiScopes, consentScopes, missingScopes } from './oauth/scopes';
export { googleEndpoints } from './oauth/google';
export { microsoftAuthority, openIdConfiguration } from './oauth/microsoft-metadata';
export {
  classifyProviderFailure,
  type ProviderBusy,
  type ProviderFailure,
  type ProviderRefusal,
} from './provider-failure';
export * from './sparkpost/events';
