/** Mailers and their states (docs/api/mailers.md, docs/mailers.md). */
export const CONFIG_TYPES = [
  'domain',
  'imap',
  'basic_imap',
  'oauth_imap',
  'smtp_imap',
  'smtp',
  'basic_smtp',
  'oauth_smtp',
  'sparkpost',
] as const;
export type ConfigType = (typeof CONFIG_TYPES)[number];

export const MAILER_STATES = ['active', 'disabled', 'deactivated'] as const;
export type MailerState = (typeof MAILER_STATES)[number];

/** SMTP `config.secure`: Auto = STARTTLS when offered, Tls = STARTTLS required, SSL = implicit TLS, None = plain. */
export const SMTP_SECURE_MODES = ['Auto', 'Tls', 'SSL', 'None'] as const;
export type SmtpSecureMode = (typeof SMTP_SECURE_MODES)[number];

export type DeactivationReason = 'oauth_revoked' | 'provider_auth_error';

/** What the send service needs to send through a mailer (secrets already unsealed). */
export type SendingMailer =
  | {
      kind: 'domain';
      id: string;
      tenantId: string;
      configType: 'domain';
      /** `deleted` when the mailer was removed after the send was accepted. */
      state: MailerState | 'deleted';
      domain: string;
      verified: boolean;
      selector: string;
      dkimPrivateKeyPem: string;
      customArgs: Record<string, unknown> | null;
    }
  | {
      kind: 'smtp';
      id: string;
      tenantId: string;
      configType: ConfigType;
      state: MailerState | 'deleted';
      email: string;
      smtp: { host: string; port: number; secure: SmtpSecureMode; username: string; password: string };
    }
  | {
      /** An OAuth mailer: sends through its account's provider API with the stored grant (libs/providers). */
      kind: 'oauth';
      id: string;
      tenantId: string;
      configType: ConfigType;
      state: MailerState | 'deleted';
      email: string;
      /** The send transport of the grant's provider (OAUTH_SEND_PROVIDER); absent without a grant. */
      oauthProvider?: 'gmail' | 'graph';
    }
  | {
      /** A SparkPost mailer: sends through SparkPost's Transmissions API with its API key. */
      kind: 'sparkpost';
      id: string;
      tenantId: string;
      configType: ConfigType;
      state: MailerState | 'deleted';
      email: string;
      /** The API key (unsealed) and the mailer's own API base (null: SPARKPOST_API_URL). */
      sparkpost: { apiKey: string; baseUrl: string | null };
    };
