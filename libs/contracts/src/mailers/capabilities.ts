/**
 * Mailer capabilities as data (docs/mailers.md): one row per `config_type` of the API contract
 * saying what a mailer of that type can do, and the one send policy both the gateway's send
 * acceptance and the send service apply. Every "is this type IMAP-capable / may it send / is it
 * OAuth / which update path owns it / how is it delivered" question reads this table; a new
 * kind of mailer (a Gmail API or Microsoft Graph sender) is a new row and a new transport entry,
 * not a new branch in the services.
 */
import { ErrorText } from '../errors';
import { IdPrefix, type IdPrefixValue } from '../ids';
import type { ConfigType, MailerState } from './types';

/**
 * Who delivers or receives for the mailer: `mx` = straight to the recipients' MX (or the
 * operator's relay), `smtp` = the mailer's own SMTP server, `imap` = the mailer's IMAP server
 * (receive only), `oauth` = the OAuth account's provider API (`gmail` or `graph`, known from the
 * OAuth connection once the connect flow exists), `sparkpost` = SparkPost's Transmissions API.
 */
export type MailerProvider = 'mx' | 'smtp' | 'imap' | 'oauth' | 'sparkpost';
/** Transport keys of the send service: the table's providers, with OAuth split by provider. */
export type SendProvider = 'mx' | 'smtp' | 'gmail' | 'graph' | 'sparkpost';
/**
 * What authenticates the mailer: a stored password, an OAuth token, the domain's DKIM key, or a
 * provider API key (stored sealed like a password, but there is no login to check it with).
 */
export type CredentialKind = 'password' | 'oauth' | 'dkim' | 'api_key';
/** A protocol with a login (SMTP, IMAP): what a stored password is checked with. */
export type MailerProtocol = 'smtp' | 'imap';
/** The update path (PUT /v1/mailer/smtp, /v1/mailer/imap or /v1/mailer/sparkpost) that manages the mailer. */
export type MailerUpdatePath = MailerProtocol | 'sparkpost';
/**
 * What proves the mailer may be used: `dns` = the domain's DNS records (domain verification),
 * `login` = a successful login at creation and on every credential change (basic_* types),
 * `oauth` = the OAuth grant, `none` = saved as given (smtp, imap).
 */
export type VerifiedBy = 'dns' | 'login' | 'oauth' | 'none';

export interface MailerCapabilities {
  configType: ConfigType;
  /** Id prefixes mailers of this type are issued with (docs/mailers.md "The table"). */
  idPrefixes: readonly IdPrefixValue[];
  sends: boolean;
  /** IMAP-capable: receives mail, has its own incoming webhook (MAILER_DEACTIVATED goes there). */
  receives: boolean;
  /** Update path that manages it; null for domain mailers (managed through /v1/domain). */
  protocol: MailerUpdatePath | null;
  /** Protocol whose login the stored password is checked with; null when there is no password. */
  passwordProtocol: MailerProtocol | null;
  provider: MailerProvider;
  credential: CredentialKind;
  /** name/email (and, for password types, config) may be changed through `protocol`'s update path. */
  updatable: boolean;
  verifiedBy: VerifiedBy;
}

const row = (c: MailerCapabilities): MailerCapabilities => Object.freeze(c);

/** The table (docs/mailers.md "The table": id prefixes and config_type values). */
export const MAILER_CAPABILITIES: Readonly<Record<ConfigType, MailerCapabilities>> = Object.freeze({
  domain: row({
    configType: 'domain',
    idPrefixes: [IdPrefix.domain],
    sends: true,
    receives: false,
    protocol: null,
    passwordProtocol: null,
    provider: 'mx',
    credential: 'dkim',
    updatable: false,
    verifiedBy: 'dns',
  }),
  smtp: row({
    configType: 'smtp',
    idPrefixes: [IdPrefix.smtp],
    sends: true,
    receives: false,
    protocol: 'smtp',
    passwordProtocol: 'smtp',
    provider: 'smtp',
    credential: 'password',
    updatable: true,
    verifiedBy: 'none',
  }),
  basic_smtp: row({
    configType: 'basic_smtp',
    idPrefixes: [IdPrefix.basicSmtp],
    sends: true,
    receives: false,
    protocol: 'smtp',
    passwordProtocol: 'smtp',
    provider: 'smtp',
    credential: 'password',
    updatable: true,
    verifiedBy: 'login',
  }),
  oauth_smtp: row({
    configType: 'oauth_smtp',
    idPrefixes: [IdPrefix.oauthSmtp],
    sends: true,
    receives: false,
    protocol: 'smtp',
    passwordProtocol: null,
    provider: 'oauth',
    credential: 'oauth',
    updatable: true,
    verifiedBy: 'oauth',
  }),
  imap: row({
    configType: 'imap',
    idPrefixes: [IdPrefix.basicImap],
    sends: false,
    receives: true,
    protocol: 'imap',
    passwordProtocol: 'imap',
    provider: 'imap',
    credential: 'password',
    updatable: true,
    verifiedBy: 'none',
  }),
  basic_imap: row({
    configType: 'basic_imap',
    idPrefixes: [IdPrefix.basicImap],
    sends: false,
    receives: true,
    protocol: 'imap',
    passwordProtocol: 'imap',
    provider: 'imap',
    credential: 'password',
    updatable: true,
    verifiedBy: 'login',
  }),
  oauth_imap: row({
    configType: 'oauth_imap',
    idPrefixes: [IdPrefix.oauthImap],
    sends: false,
    receives: true,
    protocol: 'imap',
    passwordProtocol: null,
    provider: 'oauth',
    credential: 'oauth',
    updatable: true,
    verifiedBy: 'oauth',
  }),
  smtp_imap: row({
    configType: 'smtp_imap',
    idPrefixes: [IdPrefix.oauthSmtpImap],
    sends: true,
    receives: true,
    protocol: 'imap',
    passwordProtocol: null,
    provider: 'oauth',
    credential: 'oauth',
    updatable: true,
    verifiedBy: 'oauth',
  }),
  // The API key is saved as given (SparkPost is not asked at create): a refused key deactivates
  // the mailer at its first send (docs/mailers.md "SparkPost").
  sparkpost: row({
    configType: 'sparkpost',
    idPrefixes: [IdPrefix.sparkpost],
    sends: true,
    receives: false,
    protocol: 'sparkpost',
    passwordProtocol: null,
    provider: 'sparkpost',
    credential: 'api_key',
    updatable: true,
    verifiedBy: 'none',
  }),
});

export function mailerCapabilities(configType: ConfigType): MailerCapabilities {
  return MAILER_CAPABILITIES[configType];
}

/** IMAP-capable config types (MAILER_DEACTIVATED routing, the incoming webhook). */
export const IMAP_CAPABLE_CONFIG_TYPES: readonly ConfigType[] = Object.values(MAILER_CAPABILITIES)
  .filter((c) => c.receives)
  .map((c) => c.configType);
/** Config types that send and do not receive (docs/mailers.md "The table"). */
export const SMTP_ONLY_CONFIG_TYPES: readonly ConfigType[] = Object.values(MAILER_CAPABILITIES)
  .filter((c) => c.sends && !c.receives && c.protocol === 'smtp')
  .map((c) => c.configType);

/** True for a config_type string that names an IMAP-capable type (event payloads carry strings). */
export function isImapCapable(configType: string): boolean {
  return (IMAP_CAPABLE_CONFIG_TYPES as readonly string[]).includes(configType);
}

/** What the send policy reads of a mailer; `verified` matters only for DNS-verified (domain) mailers. */
export interface MailerSendStatus {
  configType: ConfigType;
  state: MailerState | 'deleted';
  verified?: boolean;
}

export type SendRefusalCode = 'not_found' | 'cannot_send' | 'disabled' | 'deactivated' | 'unverified';

/** Why a mailer may not send now: a stable code, the HTTP status of a send refused for it, one wording. */
export interface SendRefusal {
  code: SendRefusalCode;
  status: 404 | 422;
  message: string;
}

const refusal = (code: SendRefusalCode, status: 404 | 422, message: string): SendRefusal => ({
  code,
  status,
  message,
});

/**
 * May this mailer send now, and if not, why. The gateway refuses a send with it (status and
 * message as given); the send service ends a copy accepted earlier with a final SMTP_ERROR
 * (`retry_scheduled: false`) with the same message as `failed_reason`. An unknown or deleted mailer reads as not found (another tenant's mailer
 * never reaches this function: the store returns null for it).
 */
export function sendRefusal(mailer: MailerSendStatus | null): SendRefusal | null {
  if (!mailer || mailer.state === 'deleted') return refusal('not_found', 404, ErrorText.mailerNotFound);
  const caps = mailerCapabilities(mailer.configType);
  if (!caps.sends) return refusal('cannot_send', 422, ErrorText.mailerCannotSend);
  if (mailer.state === 'disabled') return refusal('disabled', 422, ErrorText.mailerDisabled);
  if (mailer.state === 'deactivated') return refusal('deactivated', 422, ErrorText.mailerDeactivated);
  if (caps.verifiedBy === 'dns' && mailer.verified !== true)
    return refusal('unverified', 422, ErrorText.domainNotVerified);
  return null;
}

/**
 * The send transport for a mailer: `mx`, `smtp` and `sparkpost` from the table; OAuth mailers resolve to
 * `gmail` or `graph` from their OAuth grant's provider (OAUTH_SEND_PROVIDER; null without a
 * grant: no transport, the send service refuses the copy).
 */
export function sendProviderOf(mailer: {
  configType: ConfigType;
  oauthProvider?: 'gmail' | 'graph';
}): SendProvider | null {
  const caps = mailerCapabilities(mailer.configType);
  if (!caps.sends) return null;
  if (caps.provider === 'oauth') return mailer.oauthProvider ?? null;
  return caps.provider === 'mx' || caps.provider === 'smtp' || caps.provider === 'sparkpost'
    ? caps.provider
    : null;
}
