import { monotonicFactory } from 'ulid';

const nextUlid = monotonicFactory();

/** Prefixes of every identifier the service issues (SPEC.md "Identifiers", "Mailer"). */
export const IdPrefix = {
  template: 'template_',
  tenant: 'tenant_',
  apiKey: 'key_',
  emailEventsWebhook: 'email_events_',
  domain: 'domain_',
  smtp: 'smtp_',
  basicSmtp: 'basic_smtp_',
  oauthSmtp: 'oauth_smtp_',
  basicImap: 'basic_imap_',
  oauthImap: 'oauth_imap_',
  oauthSmtpImap: 'oauth_smtp_imap_',
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
