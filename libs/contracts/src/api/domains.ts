import { isIP } from 'node:net';
import { z } from 'zod';

/** Texts of the domain endpoints (the API contract leaves them open; docs/api/domains.md lists them). */
export const DomainErrorText = {
  domainRequired: 'domain is required',
  invalidDomain: 'domain must be a valid domain name',
  domainExists: 'Domain already exists',
  domainNotFound: 'Domain not found',
  invalidSelector: 'selector must be a DNS label (letters, digits, hyphens; dots between labels)',
  invalidIps: 'ips must be an array of IP addresses',
  invalidCustomArgs: 'custom_args must be an object',
} as const;

const SELECTOR_RE = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;
const flag = (name: string) => z.boolean({ invalid_type_error: `${name} must be a boolean` }).optional();

/** POST /v1/domain/add (docs/api/domains.md: every optional field of the contract). */
export const AddDomainSchema = z.object({
  domain: z
    .string({
      required_error: DomainErrorText.domainRequired,
      invalid_type_error: DomainErrorText.invalidDomain,
    })
    .trim()
    .min(1, DomainErrorText.domainRequired),
  custom_args: z
    .record(z.unknown(), { invalid_type_error: DomainErrorText.invalidCustomArgs })
    .nullable()
    .optional()
    .refine(
      (v) => v === undefined || v === null || JSON.stringify(v).length <= 10_000,
      'custom_args must be at most 10000 bytes of JSON',
    ),
  is_tenant_domain: flag('is_tenant_domain'),
  is_tenant_subdomain: flag('is_tenant_subdomain'),
  shared_with_subaccounts: flag('shared_with_subaccounts'),
  ips: z
    .array(
      z
        .string({ invalid_type_error: DomainErrorText.invalidIps })
        .refine((ip) => isIP(ip) !== 0, DomainErrorText.invalidIps),
      { invalid_type_error: DomainErrorText.invalidIps },
    )
    .max(50, 'ips must hold at most 50 addresses')
    .optional(),
  selector: z
    .string({ invalid_type_error: DomainErrorText.invalidSelector })
    .trim()
    .toLowerCase()
    .max(63, DomainErrorText.invalidSelector)
    .regex(SELECTOR_RE, DomainErrorText.invalidSelector)
    .optional(),
});
export type AddDomainRequest = z.infer<typeof AddDomainSchema>;

export const DNS_RECORD_PURPOSES = ['dkim', 'spf', 'dmarc', 'mx'] as const;
export type DnsRecordPurpose = (typeof DNS_RECORD_PURPOSES)[number];

/** One DNS record the domain owner publishes, with the result of the last check. */
export interface DomainDnsRecord {
  purpose: DnsRecordPurpose;
  type: 'TXT' | 'MX';
  /** Fully qualified name, no trailing dot. */
  name: string;
  /** TXT: the text; MX: the mail exchanger host. */
  value: string;
  /** MX only. */
  priority?: number;
  /** DKIM and SPF are required for `verified`; DMARC is recommended; MX only matters for inbound. */
  required: boolean;
  verified: boolean;
  /** Why the record did not verify (present only when `verified` is false). */
  reason?: string;
}

/** `data` of the domain add / verify / details responses and of each list item. */
export interface DomainData {
  /** A-label (ASCII) form. */
  domain: string;
  unicode_domain: string;
  mailer_id: string;
  verified: boolean;
  records: DomainDnsRecord[];
  selector: string;
  /** State of the domain's mailer: active, disabled or deactivated. */
  state: string;
  custom_args: Record<string, unknown> | null;
  is_tenant_domain: boolean;
  is_tenant_subdomain: boolean;
  shared_with_subaccounts: boolean;
  ips: string[];
  last_checked_at: string | null;
  verified_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface DomainResponse {
  success: true;
  message?: string;
  data: DomainData;
}

export interface ListDomainsResponse {
  success: true;
  data: DomainData[];
  nextPageToken: string | null;
  totalCount: number;
}
