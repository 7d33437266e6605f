/**
 * The Microsoft identity platform metadata MSAL would otherwise fetch (instance discovery and the
 * directory's openid-configuration), built offline from MICROSOFT_LOGIN_URL and the directory
 * following the documented v2.0 layout, so no token request depends on a discovery call and a
 * stand-in host can be a known authority. `{tenantid}` in the issuer of a multi-tenant directory
 * (common, organizations, consumers) is literal, as Microsoft publishes it.
 */
const MULTI_TENANT = new Set(['common', 'organizations', 'consumers']);

export interface MicrosoftAuthority {
  /** `https://<login host>/<directory>` */
  authority: string;
  /** The host MSAL is told to trust (knownAuthorities). */
  host: string;
  cloudDiscoveryMetadata: string;
  authorityMetadata: string;
}

export function microsoftAuthority(loginUrl: string, directory: string): MicrosoftAuthority {
  const base = loginUrl.replace(/\/+$/, '');
  const url = new URL(base);
  if (url.protocol !== 'https:') throw new Error('MICROSOFT_LOGIN_URL must be an https URL');
  const host = url.host;
  const authority = `${base}/${directory}`;
  const issuerTenant = MULTI_TENANT.has(directory) ? '{tenantid}' : directory;
  return {
    authority,
    host,
    cloudDiscoveryMetadata: JSON.stringify({
      tenant_discovery_endpoint: `${authority}/v2.0/.well-known/openid-configuration`,
      'api-version': '1.1',
      metadata: [{ preferred_network: host, preferred_cache: host, aliases: [host] }],
    }),
    authorityMetadata: JSON.stringify(openIdConfiguration(base, directory, issuerTenant)),
  };
}

/** The v2.0 openid-configuration document of a directory (what /{tenant}/v2.0/.well-known serves). */
export function openIdConfiguration(base: string, directory: string, issuerTenant = directory) {
  const authority = `${base}/${directory}`;
  return {
    token_endpoint: `${authority}/oauth2/v2.0/token`,
    token_endpoint_auth_methods_supported: ['client_secret_post', 'private_key_jwt', 'client_secret_basic'],
    jwks_uri: `${authority}/discovery/v2.0/keys`,
    response_modes_supported: ['query', 'fragment', 'form_post'],
    subject_types_supported: ['pairwise'],
    id_token_signing_alg_values_supported: ['RS256'],
    response_types_supported: ['code', 'id_token', 'code id_token', 'id_token token'],
    scopes_supported: ['openid', 'profile', 'email', 'offline_access'],
    issuer: `${base}/${issuerTenant}/v2.0`,
    request_uri_parameter_supported: false,
    authorization_endpoint: `${authority}/oauth2/v2.0/authorize`,
    end_session_endpoint: `${authority}/oauth2/v2.0/logout`,
    claims_supported: [
      'sub',
      'iss',
      'aud',
      'exp',
      'iat',
      'nonce',
      'preferred_username',
      'name',
      'tid',
      'email',
    ],
    tenant_region_scope: null,
  };
}
