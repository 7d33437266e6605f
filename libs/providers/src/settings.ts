/**
 * The providers' variables (docs/configuration.md, docs/oauth.md), one schema for every service
 * that talks to Google or Microsoft (the gateway's login and callback; later the send and IMAP
 * services' token refresh and API calls): where the provider endpoints are, the deployment's own
 * OAuth apps, and the token lifecycle. Services merge it into their own settings schema.
 *
 * The endpoints are the operator's configuration (like SMTP_RELAY_URL), defaulting to the
 * providers' public endpoints; tests point them at local stand-ins. They are not a tenant's
 * input, so calls to them do not go through the guarded connect (docs/oauth.md).
 */
import { type Config, integer, parseSettings, positiveInt, setTogether } from '@mailyard/platform';
import { z } from 'zod';
import { PUBLIC_PROVIDER_ENDPOINTS, type ProviderEndpoints } from './oauth/types';

/** A base URL; `strip` drops trailing slashes (the API roots keep theirs: googleapis wants one). */
const baseUrl = (fallback: string, protocols: string[], strip = true) =>
  z
    .string()
    .trim()
    .default(fallback)
    .refine(
      (v) => {
        try {
          const u = new URL(v);
          return protocols.includes(u.protocol) && !u.search && !u.hash && !u.username;
        } catch {
          return false;
        }
      },
      { message: `must be a ${protocols.map((p) => p.replace(':', '://')).join(' or ')} base URL` },
    )
    .transform((v) => (strip ? v.replace(/\/+$/, '') : v));

const optionalText = z.string().trim().min(1).max(2048).optional();

/** The variables as a plain object schema (services merge it into theirs, then add providerEnvCheck). */
export const ProviderEnvObject = z.object({
  GOOGLE_OAUTH_URL: baseUrl(PUBLIC_PROVIDER_ENDPOINTS.googleOAuthUrl, ['https:', 'http:']),
  GMAIL_API_URL: baseUrl(PUBLIC_PROVIDER_ENDPOINTS.gmailApiUrl, ['https:', 'http:'], false),
  /** MSAL accepts https authorities only. */
  MICROSOFT_LOGIN_URL: baseUrl(PUBLIC_PROVIDER_ENDPOINTS.microsoftLoginUrl, ['https:']),
  MICROSOFT_GRAPH_URL: baseUrl(PUBLIC_PROVIDER_ENDPOINTS.microsoftGraphUrl, ['https:', 'http:'], false),
  /** SparkPost's API origin for mailers without their own `base_url` (docs/providers.md "SparkPost client"). */
  SPARKPOST_API_URL: baseUrl('https://api.sparkpost.com', ['https:', 'http:']),
  // The deployment's own apps (app ids `google` and `microsoft`), besides the tenants' apps.
  GOOGLE_CLIENT_ID: optionalText,
  GOOGLE_CLIENT_SECRET: optionalText,
  MICROSOFT_CLIENT_ID: optionalText,
  MICROSOFT_CLIENT_SECRET: optionalText,
  MICROSOFT_TENANT: z
    .string()
    .trim()
    .toLowerCase()
    .regex(/^[a-z0-9](?:[a-z0-9.-]{0,98}[a-z0-9])?$/, 'must be a directory id, domain, or common')
    .default('common'),
  /** Default redirect URI (the public https://<host>/v1/oauth/callback of the gateway). */
  OAUTH_REDIRECT_URI: z
    .string()
    .trim()
    .url('must be an http(s) URL')
    .refine((v) => /^https?:\/\//.test(v) && !v.includes('#'), 'must be an http(s) URL')
    .optional(),
  /** Refresh an access token this long before it expires. */
  OAUTH_REFRESH_AHEAD_S: integer('must be a non-negative integer', 0).default(300),
  /** How long a consent URL (its signed state) stays usable. */
  OAUTH_STATE_TTL_S: positiveInt(600),
  /** Bound of one token-endpoint request. */
  OAUTH_HTTP_TIMEOUT_MS: positiveInt(10_000),
  /** How long a token request waits for another replica's refresh of the same mailer. */
  OAUTH_REFRESH_WAIT_MS: positiveInt(15_000),
});

export type ProviderSettings = z.infer<typeof ProviderEnvObject>;

/** A deployment app needs both its client id and secret. */
export const providerEnvCheck = setTogether([
  ['GOOGLE_CLIENT_ID', 'GOOGLE_CLIENT_SECRET'],
  ['MICROSOFT_CLIENT_ID', 'MICROSOFT_CLIENT_SECRET'],
]);

export const ProviderEnvSchema = ProviderEnvObject.superRefine(providerEnvCheck);

export function providerSettings(config: Pick<Config, 'env'>): ProviderSettings {
  return parseSettings(ProviderEnvSchema, config.env);
}

export function providerEndpoints(s: ProviderSettings): ProviderEndpoints {
  return {
    googleOAuthUrl: s.GOOGLE_OAUTH_URL,
    gmailApiUrl: s.GMAIL_API_URL,
    microsoftLoginUrl: s.MICROSOFT_LOGIN_URL,
    microsoftGraphUrl: s.MICROSOFT_GRAPH_URL,
  };
}
