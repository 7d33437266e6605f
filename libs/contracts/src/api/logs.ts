import { z } from 'zod';
import { ErrorText } from '../errors';
import { normalizeDomain, parseAddress } from '../validation/address';
import { fieldErrorMap, fieldPath, parseWithFieldMessages } from '../validation/messages';
import { PAGE_SIZE_DEFAULT, PAGE_SIZE_MAX } from './common';
import type { RecipientType } from './send';

/** SPEC.md "Email log entry": uppercase status values, matched exactly when filtering. */
export const EMAIL_LOG_STATUSES = [
  'QUEUED',
  'FAILED',
  'MAIL_DELIVERED',
  'MAIL_OPENED',
  'MAIL_CLICKED',
  'MAIL_BOUNCE',
  'MAIL_UNSUBSCRIBED',
] as const;
export type EmailLogStatus = (typeof EMAIL_LOG_STATUSES)[number];

export const RECIPIENT_TYPES = ['to', 'cc', 'bcc'] as const satisfies readonly RecipientType[];

/** A time bound: an RFC 3339 instant, compared inclusively unless `exclusive`. */
export interface TimeBound {
  at: string;
  exclusive: boolean;
}

const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-](\d{2}):(\d{2})))?$/;

/**
 * Parses `YYYY-MM-DD` or an RFC 3339 date-time. A bare date is that UTC day: as a start its
 * first instant, as an end the whole day (exclusive bound at the next midnight).
 */
export function parseTimeBound(value: string, edge: 'start' | 'end'): TimeBound | null {
  const m = RFC3339.exec(value);
  if (!m) return null;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const day = new Date(Date.UTC(y, mo - 1, d));
  if (day.getUTCFullYear() !== y || day.getUTCMonth() !== mo - 1 || day.getUTCDate() !== d) return null;
  if (m[4] === undefined) {
    if (edge === 'start') return { at: day.toISOString(), exclusive: false };
    return { at: new Date(day.getTime() + 86_400_000).toISOString(), exclusive: true };
  }
  const [h, mi, s] = [Number(m[4]), Number(m[5]), Number(m[6])];
  if (h > 23 || mi > 59 || s > 60 || (m[9] !== undefined && (Number(m[9]) > 23 || Number(m[10]) > 59)))
    return null;
  if (Number.isNaN(Date.parse(value.toUpperCase()))) return null;
  // The text goes to PostgreSQL as is, keeping sub-millisecond precision.
  return { at: value.toUpperCase(), exclusive: false };
}

/** Query parameters are single strings; an empty one is the same as an absent one. */
const param = <T extends z.ZodTypeAny>(schema: T) =>
  z.preprocess((v) => (v === '' ? undefined : v), z.string().optional()).pipe(schema.optional());

const timeParam = (edge: 'start' | 'end') =>
  z.string().transform((v, ctx) => {
    const bound = parseTimeBound(v, edge);
    if (bound) return bound;
    ctx.addIssue({
      code: 'custom',
      message: `${fieldPath(ctx.path)} must be an RFC 3339 date-time or a YYYY-MM-DD date`,
    });
    return z.NEVER;
  });

/** GET /v1/email/logs query (DESIGN.md "log query names"). */
export const LogsQuerySchema = z
  .object({
    /** Recipient address, matched case-insensitively. */
    email: param(
      z.string().transform((v, ctx) => {
        const parsed = parseAddress(v);
        if (parsed) return parsed.email;
        ctx.addIssue({ code: 'custom', message: ErrorText.invalidEmail });
        return z.NEVER;
      }),
    ),
    /** Recipient domain (IDNA ok), exact match, no subdomains. */
    domain: param(
      z.string().transform((v, ctx) => {
        const d = normalizeDomain(v);
        if (d) return d;
        ctx.addIssue({ code: 'custom', message: ErrorText.invalidDomain });
        return z.NEVER;
      }),
    ),
    refId: param(z.string().max(64, 'refId must be at most 64 characters')),
    startDate: param(timeParam('start')),
    endDate: param(timeParam('end')),
    status: param(z.enum(EMAIL_LOG_STATUSES, { errorMap: () => ({ message: ErrorText.invalidStatus }) })),
    /** Case-insensitive substring of the subject. */
    subject: param(z.string().max(998, 'subject must be at most 998 characters')),
    campaignId: param(z.string().max(255, 'campaignId must be at most 255 characters')),
    recipientType: param(
      z.enum(RECIPIENT_TYPES, { errorMap: () => ({ message: ErrorText.invalidRecipientType }) }),
    ),
    deliveredStartDate: param(timeParam('start')),
    deliveredEndDate: param(timeParam('end')),
    pageSize: param(
      z.coerce
        .number({ invalid_type_error: ErrorText.invalidPageSize })
        .int(ErrorText.invalidPageSize)
        .min(1, ErrorText.invalidPageSize)
        .max(PAGE_SIZE_MAX, ErrorText.invalidPageSize),
    ).transform((v) => v ?? PAGE_SIZE_DEFAULT),
    pageToken: param(z.string()),
  })
  .superRefine((q, ctx) => {
    const after = (a?: TimeBound, b?: TimeBound) => a && b && Date.parse(a.at) > Date.parse(b.at);
    if (after(q.startDate, q.endDate))
      ctx.addIssue({ code: 'custom', message: 'startDate must not be after endDate' });
    if (after(q.deliveredStartDate, q.deliveredEndDate)) {
      ctx.addIssue({ code: 'custom', message: 'deliveredStartDate must not be after deliveredEndDate' });
    }
  });
export type LogsQuery = z.output<typeof LogsQuerySchema>;

/** Parses the query; the first problem's message, e.g. `status must be one of ...`. */
export const parseLogsQuery = (input: unknown) => parseWithFieldMessages(LogsQuerySchema, input);

/** One recipient of one copy (DESIGN.md "log response"). Timestamps RFC 3339, null when unset. */
export interface EmailLogEntry {
  ref_id: string;
  recipient: string;
  recipient_type: RecipientType;
  status: string;
  subject: string;
  mailer_id: string;
  campaign_id: string | null;
  /** Empty string until the provider assigned one. */
  message_id: string;
  created_at: string;
  delivered_at: string | null;
  last_event: string | null;
  /** Empty string unless the copy failed or was suppressed. */
  failure_reason: string;
}

export interface ListLogsResponse {
  success: true;
  data: EmailLogEntry[];
  nextPageToken: string | null;
  totalCount: number;
}
