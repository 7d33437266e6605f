/**
 * Which scopes a mailer of each type asks for, and whether a grant covers them. Least privilege:
 * a sending mailer asks only to send, a reading one only to read; `openid email` give the
 * account's address in the id_token. Google wants offline access by parameter
 * (`access_type=offline`), Microsoft by the `offline_access` scope.
 *
 * Users can untick scopes on Google's consent screen, so a grant is checked against the API
 * scopes its type needs (missingScopes) before a mailer is connected with it.
 */
import type { OAuthMailerType, OAuthProviderName } from '@mailyard/contracts';

export const GOOGLE_SCOPES = {
  send: 'https://www.googleapis.com/auth/gmail.send',
  read: 'https://www.googleapis.com/auth/gmail.readonly',
} as const;
export const MICROSOFT_SCOPES = { send: 'Mail.Send', read: 'Mail.Read' } as const;

const IDENTITY: Record<OAuthProviderName, readonly string[]> = {
  google: ['openid', 'email'],
  microsoft: ['offline_access', 'openid', 'email'],
};

/** The provider API scopes a mailer type needs (what the grant is checked for). */
export function apiScopes(provider: OAuthProviderName, type: OAuthMailerType): string[] {
  const s = provider === 'google' ? GOOGLE_SCOPES : MICROSOFT_SCOPES;
  if (type === 'smtp') return [s.send];
  if (type === 'imap') return [s.read];
  return [s.send, s.read];
}

/** Every scope the consent (and a refresh) asks for: identity scopes and the API scopes. */
export function consentScopes(provider: OAuthProviderName, type: OAuthMailerType): string[] {
  return [...IDENTITY[provider], ...apiScopes(provider, type)];
}

/** Graph scopes may come back as `https://graph.microsoft.com/Mail.Send`; compared by their last part. */
function normalise(provider: OAuthProviderName, scope: string): string {
  if (provider === 'microsoft') return scope.replace(/^https:\/\/graph\.microsoft\.com\//i, '').toLowerCase();
  return scope;
}

/** Splits a token response's space-delimited `scope`. */
export function parseScopes(value: string | undefined | null): string[] {
  return (value ?? '').split(/\s+/).filter(Boolean);
}

/** API scopes the type needs that `granted` lacks (empty = the grant covers the type). */
export function missingScopes(
  provider: OAuthProviderName,
  type: OAuthMailerType,
  granted: readonly string[],
): string[] {
  const have = new Set(granted.map((g) => normalise(provider, g)));
  return apiScopes(provider, type).filter((s) => !have.has(normalise(provider, s)));
}
