import { z } from 'zod';
import { ErrorText } from '../errors';
import { type ConfigType, type MailerState, SMTP_SECURE_MODES, type SmtpSecureMode } from '../mailers/types';
import { webhookHeadersSchema } from '../validation/webhook-headers';

/** Texts of the mailer endpoints (the API contract leaves them open; docs/api/mailers.md lists them). */
export const MailerErrorText = {
  mailerIdRequired: 'mailer_id is required',
  mailerNotFound: 'Mailer not found',
  emailRequired: 'email is required',
  invalidEmail: 'email must be a valid email address',
  configRequired: 'config is required',
  hostRequired: 'config.host is required',
  invalidPort: 'config.port must be an integer from 1 to 65535',
  usernameRequired: 'config.username is required',
  passwordRequired: 'config.password is required',
  invalidSmtpSecure: 'config.secure must be one of Auto, Tls, SSL, None',
  imapPortSslOnly: 'Basic IMAP supports port 993 with SSL only',
  smtpConfigType: 'config_type must be smtp for an SMTP configuration',
  imapConfigType: 'config_type must be imap for an IMAP configuration',
  basicOnly: 'connection_type must be basic; OAuth mailers are connected through POST /v1/oauth/login',
  notSmtpMailer: 'Mailer is not a basic SMTP configuration',
  notImapMailer: 'Mailer is not a basic IMAP configuration',
  oauthConfig: 'The config of an OAuth mailer cannot be changed; reconnect it through POST /v1/oauth/login',
  hostNotAllowed: 'Mailer host is not allowed',
  hostUnresolved: 'Mailer host does not resolve',
  passwordForChange:
    'config.password is required when host, port, username or secure changes: the stored password is not sent to a new destination',
  domainMailer: 'A domain mailer is managed through the /v1/domain endpoints',
  deactivatedDisable: 'Mailer is deactivated; re-authenticate it (enable, or update its credentials) first',
  oauthReauth: 'An OAuth mailer is re-activated by connecting it again through POST /v1/oauth/login',
  smtpAuthFailed: 'SMTP authentication failed',
  smtpConnectFailed: 'Could not connect to the SMTP server',
  smtpTimeout: 'The SMTP server did not answer in time',
  smtpTlsFailed: 'TLS with the SMTP server failed',
  smtpFailed: 'SMTP verification failed',
  imapAuthFailed: 'IMAP authentication failed',
  imapConnectFailed: 'Could not connect to the IMAP server',
  imapTimeout: 'The IMAP server did not answer in time',
  imapTlsFailed: 'TLS with the IMAP server failed',
  imapFailed: 'IMAP verification failed',
  invalidWebhook: 'webhook.url must be an https URL',
  apiKeyRequired: 'config.api_key is required',
  invalidBaseUrl: 'config.base_url must be an https URL without path, query or credentials',
  apiKeyForChange:
    'config.api_key is required when base_url changes: the stored API key is not sent to a new destination',
  notSparkPostMailer: 'Mailer is not a SparkPost configuration',
  apiKeyReauth: 'A SparkPost mailer is re-activated by updating its api_key through PUT /v1/mailer/sparkpost',
  sparkPostConfigType: 'config_type must be sparkpost for a SparkPost configuration',
} as const;

const text = (message: string, max = 255) =>
  z
    .string({ required_error: message, invalid_type_error: message })
    .trim()
    .min(1, message)
    .max(max, `${message} (at most ${max} characters)`);
const host = text(MailerErrorText.hostRequired, 253).refine(
  (h) => !/[\s/@]/.test(h),
  'config.host must be a host name or IP address',
);
const port = z
  .number({ invalid_type_error: MailerErrorText.invalidPort })
  .int(MailerErrorText.invalidPort)
  .min(1, MailerErrorText.invalidPort)
  .max(65535, MailerErrorText.invalidPort);
const username = text(MailerErrorText.usernameRequired, 320);
const password = z
  .string({
    required_error: MailerErrorText.passwordRequired,
    invalid_type_error: MailerErrorText.passwordRequired,
  })
  .min(1, MailerErrorText.passwordRequired)
  .max(1024, 'config.password must be at most 1024 characters');
const smtpSecure = z.enum(SMTP_SECURE_MODES, {
  errorMap: () => ({ message: MailerErrorText.invalidSmtpSecure }),
});
/** IMAP `secure`: basic IMAP is implicit TLS only; `SSL` (or `true`) is accepted, anything else is refused. */
const imapSecure = z.union([z.literal('SSL'), z.literal(true)], {
  errorMap: () => ({ message: MailerErrorText.imapPortSslOnly }),
});
const imapPort = z.literal(993, { errorMap: () => ({ message: MailerErrorText.imapPortSslOnly }) });
const name = text(ErrorText.nameRequired);
const email = z
  .string({
    required_error: MailerErrorText.emailRequired,
    invalid_type_error: MailerErrorText.emailRequired,
  })
  .trim()
  .min(1, MailerErrorText.emailRequired)
  .max(320, MailerErrorText.invalidEmail)
  .email(MailerErrorText.invalidEmail);
const connectionType = z
  .literal('basic', { errorMap: () => ({ message: MailerErrorText.basicOnly }) })
  .optional();

export const WebhookConfigSchema = z.object(
  {
    url: z
      .string({
        required_error: MailerErrorText.invalidWebhook,
        invalid_type_error: MailerErrorText.invalidWebhook,
      })
      .trim()
      .url(MailerErrorText.invalidWebhook)
      .max(2048, 'webhook.url must be at most 2048 characters'),
    method: z
      .enum(['GET', 'POST', 'PUT', 'DELETE', 'PATCH'], {
        errorMap: () => ({ message: 'webhook.method must be GET, POST, PUT, DELETE or PATCH' }),
      })
      .default('POST'),
    headers: webhookHeadersSchema('webhook.headers').optional(),
  },
  { invalid_type_error: 'webhook must be an object' },
);
export type WebhookConfig = z.infer<typeof WebhookConfigSchema>;

export const SmtpConfigSchema = z.object(
  { host, port: port.optional(), username, password, secure: smtpSecure.default('Auto') },
  { required_error: MailerErrorText.configRequired, invalid_type_error: MailerErrorText.configRequired },
);
export const ImapConfigSchema = z.object(
  {
    host,
    port: imapPort.default(993),
    username,
    password,
    secure: imapSecure.default('SSL').transform(() => 'SSL' as const),
  },
  { required_error: MailerErrorText.configRequired, invalid_type_error: MailerErrorText.configRequired },
);

/** POST /v1/mailer/smtp and POST /v1/smtpbasic/verify (docs/api/mailers.md: verify takes the create payload). */
export const CreateSmtpMailerSchema = z.object({
  name,
  email,
  config_type: z
    .enum(['smtp', 'basic_smtp'], { errorMap: () => ({ message: MailerErrorText.smtpConfigType }) })
    .optional(),
  connection_type: connectionType,
  config: SmtpConfigSchema,
});
export type CreateSmtpMailerRequest = z.infer<typeof CreateSmtpMailerSchema>;

/** POST /v1/mailer/imap and POST /v1/imapbasic/verify; `webhook` is the mailer's incoming webhook. */
export const CreateImapMailerSchema = z.object({
  name,
  email,
  config_type: z
    .enum(['imap', 'basic_imap'], { errorMap: () => ({ message: MailerErrorText.imapConfigType }) })
    .optional(),
  connection_type: connectionType,
  config: ImapConfigSchema,
  webhook: WebhookConfigSchema.optional(),
});
export type CreateImapMailerRequest = z.infer<typeof CreateImapMailerSchema>;

/** The fields of a PUT: `mailer_id` and only what changes; `config` with the kind's port and `secure`. */
const updateFields = <P extends z.ZodTypeAny, S extends z.ZodTypeAny>(config: { port: P; secure: S }) => ({
  mailer_id: text(MailerErrorText.mailerIdRequired, 200),
  name: name.optional(),
  email: email.optional(),
  config: z
    .object(
      {
        host: host.optional(),
        port: config.port,
        username: username.optional(),
        password: password.optional(),
        secure: config.secure,
      },
      { invalid_type_error: MailerErrorText.configRequired },
    )
    .optional(),
});

/** PUT /v1/mailer/smtp: `mailer_id` and only the fields to change; an omitted password is kept. */
export const UpdateSmtpMailerSchema = z.object(
  updateFields({ port: port.optional(), secure: smtpSecure.optional() }),
);
export type UpdateSmtpMailerRequest = z.infer<typeof UpdateSmtpMailerSchema>;

/** PUT /v1/mailer/imap; `webhook: null` removes the incoming webhook. */
export const UpdateImapMailerSchema = z.object({
  ...updateFields({
    port: imapPort.optional(),
    secure: imapSecure.optional().transform((v) => (v === undefined ? undefined : ('SSL' as const))),
  }),
  webhook: WebhookConfigSchema.nullable().optional(),
});
export type UpdateImapMailerRequest = z.infer<typeof UpdateImapMailerSchema>;

const apiKey = z
  .string({
    required_error: MailerErrorText.apiKeyRequired,
    invalid_type_error: MailerErrorText.apiKeyRequired,
  })
  .trim()
  .min(1, MailerErrorText.apiKeyRequired)
  .max(512, 'config.api_key must be at most 512 characters')
  .refine((k) => /^[\x21-\x7e]+$/.test(k), 'config.api_key must be printable ASCII without spaces');
/**
 * A SparkPost API base (e.g. https://api.eu.sparkpost.com): https, an origin only (the client adds
 * /api/v1/...), no credentials; stored without a trailing slash.
 */
const sparkPostBaseUrl = z
  .string({ invalid_type_error: MailerErrorText.invalidBaseUrl })
  .trim()
  .max(2048, MailerErrorText.invalidBaseUrl)
  .refine((v) => {
    try {
      const u = new URL(v);
      return (
        u.protocol === 'https:' &&
        !u.username &&
        !u.password &&
        !u.search &&
        !u.hash &&
        /^\/*$/.test(u.pathname)
      );
    } catch {
      return false;
    }
  }, MailerErrorText.invalidBaseUrl)
  .transform((v) => new URL(v).origin);

/** POST /v1/mailer/sparkpost: the API key is sealed; `base_url` defaults to SPARKPOST_API_URL. */
export const CreateSparkPostMailerSchema = z.object({
  name,
  email,
  config_type: z
    .literal('sparkpost', { errorMap: () => ({ message: MailerErrorText.sparkPostConfigType }) })
    .optional(),
  config: z.object(
    { api_key: apiKey, base_url: sparkPostBaseUrl.optional() },
    { required_error: MailerErrorText.configRequired, invalid_type_error: MailerErrorText.configRequired },
  ),
});
export type CreateSparkPostMailerRequest = z.infer<typeof CreateSparkPostMailerSchema>;

/**
 * PUT /v1/mailer/sparkpost: `mailer_id` and only what changes. `base_url: null` goes back to
 * SPARKPOST_API_URL; a base_url change needs `api_key` again (docs/architecture.md, security 7).
 */
export const UpdateSparkPostMailerSchema = z.object({
  mailer_id: text(MailerErrorText.mailerIdRequired, 200),
  name: name.optional(),
  email: email.optional(),
  config: z
    .object(
      { api_key: apiKey.optional(), base_url: sparkPostBaseUrl.nullable().optional() },
      { invalid_type_error: MailerErrorText.configRequired },
    )
    .optional(),
});
export type UpdateSparkPostMailerRequest = z.infer<typeof UpdateSparkPostMailerSchema>;

/** `config` of a SparkPost mailer: never the key, only whether one is stored. */
export interface SparkPostMailerConfigView {
  /** The mailer's own API base; null when it uses SPARKPOST_API_URL. */
  base_url: string | null;
  api_key_set: boolean;
}

/** Where SparkPost's webhook calls back for this mailer (the password is shown at create only). */
export interface MailerCallbackView {
  url: string;
  username: string;
}

/** POST /v1/mailer/sparkpost: the callback credentials to paste into SparkPost, shown once. */
export interface SparkPostMailerCreatedResponse {
  success: true;
  mailer_id: string;
  message: string;
  callback: MailerCallbackView & { password: string };
}

/** `config` of a mailer as returned: never the password, only whether one is stored. */
export interface MailerConnectionView {
  host: string;
  port: number;
  username: string;
  secure: SmtpSecureMode;
  password_set: boolean;
}
export interface DomainMailerConfigView {
  domain: string;
  selector: string;
  verified: boolean;
}

/** `config` of an OAuth mailer: whose grant it holds; tokens are never returned. */
export interface OAuthMailerConfigView {
  provider: 'google' | 'microsoft';
  /** The OAuth app the grant was made to (`google` / `microsoft` for the deployment's apps). */
  app_id: string;
  /** Scopes the account granted. */
  scopes: string[];
  /** When the current access token expires (it is refreshed ahead of that). */
  token_expires_at: string | null;
}

export interface MailerView {
  mailer_id: string;
  name: string;
  email: string;
  config_type: ConfigType;
  connection_type: 'basic' | 'oauth' | 'domain';
  state: MailerState;
  /** Why the mailer was deactivated (`oauth_revoked`, `provider_auth_error`), else null. */
  state_reason: string | null;
  config:
    | MailerConnectionView
    | DomainMailerConfigView
    | OAuthMailerConfigView
    | SparkPostMailerConfigView
    | Record<string, never>;
  /** SparkPost mailers: where SparkPost's webhook calls back (never the password). */
  callback?: MailerCallbackView;
  /** IMAP mailers: the incoming webhook; header values are never returned. */
  webhook?: { url: string; method: string; headers_present: string[] } | null;
  created_at: string;
  updated_at: string;
}

export interface MailerCreatedResponse {
  success: true;
  mailer_id: string;
  message: string;
}
export interface GetMailerResponse {
  success: true;
  data: MailerView;
}
export interface ListMailersResponse {
  success: true;
  data: MailerView[];
  nextPageToken: string | null;
  totalCount: number;
}
