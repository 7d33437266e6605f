import { z } from 'zod';
import { WebhookHeadersSchema } from './webhooks';

/**
 * Inbound routing API (docs/api/inbound.md). The
 * spec gives no error texts for these endpoints; ours live here. URL and header rules are the
 * webhooks' (the gateway runs the same URL check).
 */

export const INBOUND_METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH'] as const;
export type InboundMethodName = (typeof INBOUND_METHODS)[number];

export const InboundErrorText = {
  domainRequired: 'domain is required',
  domainInvalid: 'domain must be a domain name',
  domainNotVerified: 'domain must be a verified sending domain of this account',
  domainNotFound: 'Incoming domain not found',
  domainExists: 'Incoming domain already configured',
  urlRequired: 'url is required',
  urlInvalid: 'url must be a string',
  methodRequired: 'method is required',
  methodInvalid: 'method must be one of GET, POST, PUT, DELETE, PATCH',
  wildcardInvalid: 'wildcard must be a boolean',
  updateEmpty: 'at least one of url, method, headers, wildcard must be given',
  userNameRequired: 'user_name is required',
  userNameInvalid:
    'user_name must be 2 to 64 characters of a-z A-Z 0-9 . _ + - (no @, spaces or other characters)',
  usernameInvalid:
    'username must be a full address: local part of 2 to 64 characters of a-z A-Z 0-9 . _ + -, then @domain',
  usernameExists: 'Incoming email address already exists',
  usernameNotFound: 'Incoming email address not found',
  usernameDomainMismatch: 'username must be an address under domain',
  activeInvalid: 'active must be a boolean',
  strictRepliesInvalid: 'strict_replies must be a boolean',
} as const;

/** Username rules (docs/api/inbound.md): case-insensitive, stored lowercase. */
export const INBOUND_USERNAME = /^[a-zA-Z0-9._+-]{2,64}$/;

const str = (required: string, invalid: string) =>
  z.string({ required_error: required, invalid_type_error: invalid }).trim().min(1, required);

const methodSchema = z
  .string({
    required_error: InboundErrorText.methodRequired,
    invalid_type_error: InboundErrorText.methodInvalid,
  })
  .transform((v) => v.toUpperCase())
  .refine((v): v is InboundMethodName => (INBOUND_METHODS as readonly string[]).includes(v), {
    message: InboundErrorText.methodInvalid,
  });

const urlSchema = str(InboundErrorText.urlRequired, InboundErrorText.urlInvalid).pipe(
  z.string().max(2048, 'url must be at most 2048 characters'),
);

const nullable = <T extends z.ZodTypeAny>(s: T) =>
  z.preprocess((v) => (v === null ? undefined : v), s.optional());

export const RelayWebhookSchema = z.object({
  domain: str(InboundErrorText.domainRequired, InboundErrorText.domainInvalid),
  url: urlSchema,
  method: methodSchema,
  headers: nullable(WebhookHeadersSchema),
});
export type RelayWebhookInput = z.output<typeof RelayWebhookSchema>;

export const UpdateInboundDomainSchema = z
  .object({
    url: nullable(urlSchema),
    method: nullable(methodSchema),
    headers: nullable(WebhookHeadersSchema),
    wildcard: nullable(z.boolean({ invalid_type_error: InboundErrorText.wildcardInvalid })),
  })
  .refine(
    (b) =>
      b.url !== undefined || b.method !== undefined || b.headers !== undefined || b.wildcard !== undefined,
    { message: InboundErrorText.updateEmpty },
  );

export const CreateInboundUsernameSchema = z.object({
  user_name: str(InboundErrorText.userNameRequired, InboundErrorText.userNameInvalid)
    .refine((v) => INBOUND_USERNAME.test(v), InboundErrorText.userNameInvalid)
    .transform((v) => v.toLowerCase()),
  domain: str(InboundErrorText.domainRequired, InboundErrorText.domainInvalid),
});

export const UpdateInboundUsernameSchema = z.object({
  domain: str(InboundErrorText.domainRequired, InboundErrorText.domainInvalid),
  active: nullable(z.boolean({ invalid_type_error: InboundErrorText.activeInvalid })),
  strict_replies: nullable(z.boolean({ invalid_type_error: InboundErrorText.strictRepliesInvalid })),
});

export interface InboundDomainResponse {
  domain: string;
  url: string;
  method: InboundMethodName;
  /** Header names with masked values: the values are sealed and never returned. */
  headers: Record<string, string>;
  wildcard: boolean;
}

export interface InboundUsernamesResponse {
  success: true;
  emails: { username: string; active: boolean; strict_replies: boolean }[];
}

/** The masked value GET shows for each configured header. */
export const INBOUND_HEADER_MASK = '********';
