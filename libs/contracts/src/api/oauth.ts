/**
 * OAuth apps, login, callback and activation (docs/api/oauth.md,
 * docs/oauth.md). A tenant registers its own app with Google or Microsoft (client id
 * and secret, the secret sealed at rest), or uses the deployment's app configured by environment
 * (app ids `google` and `microsoft`). Login returns the provider's consent URL, or exchanges a
 * refresh `token` at once; the callback or that exchange creates or updates the mailer whose id
 * prefix and config_type follow from `type`.
 */
import { z } from 'zod';
import { IdPrefix, type IdPrefixValue } from '../ids';
import type { ConfigType } from '../mailers/types';
import { hasControlChars } from '../validation/control';

export const OAUTH_PROVIDERS = ['google', 'microsoft'] as const;
export type OAuthProviderName = (typeof OAUTH_PROVIDERS)[number];

/** What an OAuth mailer does: send, read, or both (the login's `type`). */
export const OAUTH_MAILER_TYPES = ['smtp', 'imap', 'smtp_imap'] as const;
export type OAuthMailerType = (typeof OAUTH_MAILER_TYPES)[number];

/** config_type and id prefix of the mailer a login of each `type` creates (docs/mailers.md "The table"). */
export const OAUTH_MAILER_KINDS: Readonly<
  Record<OAuthMailerType, { configType: ConfigType; prefix: IdPrefixValue }>
> = Object.freeze({
  smtp: { configType: 'oauth_smtp', prefix: IdPrefix.oauthSmtp },
  imap: { configType: 'oauth_imap', prefix: IdPrefix.oauthImap },
  smtp_imap: { configType: 'smtp_imap', prefix: IdPrefix.oauthSmtpImap },
});

/** The login `type` of an OAuth mailer's config_type; null for other config types. */
export function oauthMailerTypeOf(configType: ConfigType): OAuthMailerType | null {
  for (const t of OAUTH_MAILER_TYPES) if (OAUTH_MAILER_KINDS[t].configType === configType) return t;
  return null;
}

/** The send transport key (capabilities.ts sendProviderOf) of each OAuth provider. */
export const OAUTH_SEND_PROVIDER: Readonly<Record<OAuthProviderName, 'gmail' | 'graph'>> = Object.freeze({
  google: 'gmail',
  microsoft: 'graph',
});

/** App ids of the deployment's own apps (GOOGLE_CLIENT_ID..., MICROSOFT_CLIENT_ID...). */
export const DEPLOYMENT_APP_IDS: Readonly<Record<OAuthProviderName, string>> = Object.freeze({
  google: 'google',
  microsoft: 'microsoft',
});

export const OAuthErrorText = {
  providerRequired: 'provider must be google or microsoft',
  clientIdRequired: 'client_id is required',
  clientSecretRequired: 'client_secret is required',
  invalidRedirectUri: 'redirect_uri must be an http(s) URL without a fragment',
  invalidDirectoryTenant:
    'directory_tenant must be a directory (tenant) id, a verified domain, or common, organizations, consumers',
  directoryTenantGoogle: 'directory_tenant applies to microsoft apps only',
  appIdRequired: 'app_id is required',
  appNotFound: 'OAuth app not found',
  appInUse: 'OAuth app is used by mailers; delete or reconnect them first',
  deploymentApp: 'The deployment app is configured by the operator and cannot be deleted',
  invalidType: 'type must be smtp, imap or smtp_imap',
  invalidToken: 'token must be a refresh token string',
  mailerIdRequired: 'mailer_id is required',
  notOAuthMailer: 'Mailer is not an OAuth mailer',
  typeChange: 'type cannot change for an existing mailer; connect a new mailer instead',
  redirectUriRequired:
    'redirect_uri is required: give it in the login, on the app, or set OAUTH_REDIRECT_URI',
  invalidState: 'Invalid or expired OAuth state',
  codeRequired: 'code is required',
  consentDenied: 'The authorization was not granted',
  grantRejected: 'The provider rejected the authorization',
  tokenRejected: 'The provider rejected the refresh token',
  providerBusy: 'The provider is unavailable or throttling; retry later',
  providerFailed: 'The provider could not be reached',
  appRejected: 'The provider rejected the OAuth app credentials (client_id / client_secret)',
  scopesMissing: 'The grant lacks scopes this mailer needs',
  noEmail: 'The provider did not return the account email; grant the email scope',
  accountMismatch: "The authorized account is not the mailer's account",
  deactivatedActivate: 'Mailer is deactivated; re-authenticate it through POST /v1/oauth/login',
  invalidActive: 'active must be a boolean',
} as const;

const required = (message: string, max: number) =>
  z
    .string({ required_error: message, invalid_type_error: message })
    .trim()
    .min(1, message)
    .max(max, `${message} (at most ${max} characters)`);

const noControl = (v: string) => !hasControlChars(v);

/** An http(s) URL the provider redirects the browser to (registered with the app). */
export const RedirectUriSchema = z
  .string({
    required_error: OAuthErrorText.invalidRedirectUri,
    invalid_type_error: OAuthErrorText.invalidRedirectUri,
  })
  .trim()
  .max(2048, OAuthErrorText.invalidRedirectUri)
  .refine((v) => {
    if (!noControl(v)) return false;
    try {
      const u = new URL(v);
      return (u.protocol === 'https:' || u.protocol === 'http:') && u.hash === '' && !v.includes('#');
    } catch {
      return false;
    }
  }, OAuthErrorText.invalidRedirectUri);

/** A Microsoft Entra directory: GUID, domain name, or common / organizations / consumers. */
export const DirectoryTenantSchema = z
  .string({ invalid_type_error: OAuthErrorText.invalidDirectoryTenant })
  .trim()
  .toLowerCase()
  .regex(/^[a-z0-9](?:[a-z0-9.-]{0,98}[a-z0-9])?$/, OAuthErrorText.invalidDirectoryTenant)
  .refine((v) => !v.includes('..'), OAuthErrorText.invalidDirectoryTenant);

/** POST /v1/oauth/apps */
export const CreateOAuthAppSchema = z
  .object({
    provider: z.enum(OAUTH_PROVIDERS, {
      errorMap: () => ({ message: OAuthErrorText.providerRequired }),
    }),
    client_id: required(OAuthErrorText.clientIdRequired, 512).refine(
      noControl,
      OAuthErrorText.clientIdRequired,
    ),
    client_secret: z
      .string({
        required_error: OAuthErrorText.clientSecretRequired,
        invalid_type_error: OAuthErrorText.clientSecretRequired,
      })
      .min(1, OAuthErrorText.clientSecretRequired)
      .max(2048, `${OAuthErrorText.clientSecretRequired} (at most 2048 characters)`),
    redirect_uri: RedirectUriSchema.optional(),
    directory_tenant: DirectoryTenantSchema.optional(),
  })
  .refine((a) => a.provider === 'microsoft' || a.directory_tenant === undefined, {
    message: OAuthErrorText.directoryTenantGoogle,
    path: ['directory_tenant'],
  });
export type CreateOAuthAppRequest = z.infer<typeof CreateOAuthAppSchema>;

/** POST /v1/oauth/login */
export const OAuthLoginSchema = z.object({
  app_id: required(OAuthErrorText.appIdRequired, 200),
  type: z.enum(OAUTH_MAILER_TYPES, { errorMap: () => ({ message: OAuthErrorText.invalidType }) }).optional(),
  redirect_uri: RedirectUriSchema.optional(),
  mailer_id: required(OAuthErrorText.mailerIdRequired, 200).optional(),
  /** A refresh token the tenant obtained elsewhere (same app): exchanged at once. */
  token: z
    .string({ invalid_type_error: OAuthErrorText.invalidToken })
    .trim()
    .min(1, OAuthErrorText.invalidToken)
    .max(4096, OAuthErrorText.invalidToken)
    .refine(noControl, OAuthErrorText.invalidToken)
    .optional(),
  /** Name of a new mailer; default: the account's email. */
  name: required('name is required', 255).optional(),
});
export type OAuthLoginRequest = z.infer<typeof OAuthLoginSchema>;

/** GET /v1/oauth/callback (the provider's redirect: `code` and `state`, or `error`). */
export const OAuthCallbackQuerySchema = z.object({
  state: z
    .string({ required_error: OAuthErrorText.invalidState, invalid_type_error: OAuthErrorText.invalidState })
    .min(1, OAuthErrorText.invalidState)
    .max(4096, OAuthErrorText.invalidState),
  code: z.string().min(1).max(4096).optional(),
  error: z.string().max(256).optional(),
  error_description: z.string().max(2048).optional(),
});
export type OAuthCallbackQuery = z.infer<typeof OAuthCallbackQuerySchema>;

/** POST /v1/oauth/activate: `active` defaults to true. */
export const OAuthActivateSchema = z.object({
  mailer_id: required(OAuthErrorText.mailerIdRequired, 200),
  active: z.boolean({ invalid_type_error: OAuthErrorText.invalidActive }).default(true),
});
export type OAuthActivateRequest = z.infer<typeof OAuthActivateSchema>;

export interface OAuthAppView {
  app_id: string;
  provider: OAuthProviderName;
  client_id: string;
  redirect_uri: string | null;
  /** Microsoft apps: the directory of the authority; null for Google. */
  directory_tenant: string | null;
  /** `tenant`: registered through this API; `deployment`: the operator's app from the environment. */
  source: 'tenant' | 'deployment';
  created_at: string | null;
}

export interface OAuthAppCreatedResponse {
  success: true;
  app_id: string;
}
export interface ListOAuthAppsResponse {
  success: true;
  data: OAuthAppView[];
}
export interface OAuthLoginUrlResponse {
  success: true;
  url: string;
}
export interface OAuthConnectedResponse {
  success: true;
  mailer_id: string;
  message: string;
}
