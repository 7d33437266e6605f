import { randomBytes } from 'node:crypto';
import { monotonicFactory } from 'ulid';

// ulid's default source calls randomBytes(1) for each of an id's 16 random characters;
// drawing from a pooled buffer gives the same distribution for a fraction of the cost.
const POOL_BYTES = 4096;
let pool = randomBytes(POOL_BYTES);
let poolPos = 0;
function pooledPrng(): number {
  if (poolPos >= POOL_BYTES) {
    pool = randomBytes(POOL_BYTES);
    poolPos = 0;
  }
  return pool[poolPos++]! / 0xff;
}

const nextUlid = monotonicFactory(pooledPrng);

/** Prefixes of every identifier the service issues (docs/api/conventions.md "Responses", docs/mailers.md "The table"). */
export const IdPrefix = {
  template: 'template_',
  tenant: 'tenant_',
  apiKey: 'key_',
  emailEventsWebhook: 'email_events_',
  webhookDelivery: 'whd_',
  inboundMessage: 'inmsg_',
  domain: 'domain_',
  smtp: 'smtp_',
  basicSmtp: 'basic_smtp_',
  oauthSmtp: 'oauth_smtp_',
  basicImap: 'basic_imap_',
  oauthImap: 'oauth_imap_',
  oauthSmtpImap: 'oauth_smtp_imap_',
  sparkpost: 'sparkpost_',
  oauthApp: 'oauthapp_',
  dmarcReport: 'dmarcrep_',
  tlsReport: 'tlsrep_',
} as const;

export type IdPrefixValue = (typeof IdPrefix)[keyof typeof IdPrefix];

export function ulid(): string {
  return nextUlid();
}

export function newId(prefix: IdPrefixValue): string {
  return `${prefix}${nextUlid()}`;
}

const ULID_RE = /^[0-9A-HJKMNP-TV-Z]{26}$/;

export function isUlid(value: string): boolean {
  return ULID_RE.test(value);
}

/** True when `value` is `<prefix><ulid>`. */
export function hasIdPrefix(value: string, prefix: IdPrefixValue): boolean {
  return value.startsWith(prefix) && isUlid(value.slice(prefix.length));
}

/**
 * What every Message-ID we write starts with (`<svc_mailer_{id}@SERVICE_DOMAIN>`): the send
 * service writes it, the MX's strict_replies rule recognises replies to our mail by it.
 */
export const SERVICE_MESSAGE_ID_PREFIX = 'svc_mailer_';
