import { microsoftAuthority } from './microsoft-metadata';

describe('Microsoft authority metadata (offline)', () => {
  it('places every endpoint under MICROSOFT_LOGIN_URL and the directory', () => {
    const a = microsoftAuthority('https://login.microsoftonline.com/', 'contoso.onmicrosoft.com');
    expect(a.authority).toBe('https://login.microsoftonline.com/contoso.onmicrosoft.com');
    expect(a.host).toBe('login.microsoftonline.com');
    const meta = JSON.parse(a.authorityMetadata);
    expect(meta.token_endpoint).toBe(
      'https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/token',
    );
    expect(meta.authorization_endpoint).toBe(
      'https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/authorize',
    );
    expect(meta.issuer).toBe('https://login.microsoftonline.com/contoso.onmicrosoft.com/v2.0');
    const cloud = JSON.parse(a.cloudDiscoveryMetadata);
    expect(cloud.metadata[0].aliases).toEqual(['login.microsoftonline.com']);
    expect(cloud.tenant_discovery_endpoint).toBe(
      'https://login.microsoftonline.com/contoso.onmicrosoft.com/v2.0/.well-known/openid-configuration',
    );
  });

  it('keeps the {tenantid} placeholder in the issuer of multi-tenant directories', () => {
    const meta = JSON.parse(microsoftAuthority('https://127.0.0.1:8443', 'common').authorityMetadata);
    expect(meta.issuer).toBe('https://127.0.0.1:8443/{tenantid}/v2.0');
    expect(meta.token_endpoint).toBe('https://127.0.0.1:8443/common/oauth2/v2.0/token');
  });

  it('refuses a non-https login URL (MSAL would)', () => {
    expect(() => microsoftAuthority('http://127.0.0.1:8080', 'common')).toThrow('https');
  });
});
