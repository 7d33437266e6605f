import { z } from 'zod';
import { ErrorText } from '../errors';
import type { EmailEvent } from '../events/email-event';
import { parseAddress } from '../validation/address';
import { fieldErrorMap, parseWithFieldMessages } from '../validation/messages';
import {
  checkTimeRange,
  domainParam,
  pageSizeParam,
  queryParam as param,
  timeBoundParam as timeParam,
} from './query-params';
import type { RecipientType } from './send';

/** docs/api/logs.md: uppercase status values, matched exactly when filtering. */
export const EMAIL_LOG_STATUSES = [
  'SCHEDULED',
  'QUEUED',
  'FAILED',
  'MAIL_DELIVERED',
  'MAIL_OPENED',
  'MAIL_CLICKED',
  'MAIL_BOUNCE',
  'MAIL_UNSUBSCRIBED',
  'CANCELLED',
] as const;
export type EmailLogStatus = (typeof EMAIL_LOG_STATUSES)[number];

export { parseTimeBound, type TimeBound } from './query-params';

export const RECIPIENT_TYPES = ['to', 'cc', 'bcc'] as const satisfies readonly RecipientType[];

/** GET /v1/email/logs query (docs/api/logs.md). */
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
    domain: param(domainParam()),
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
    pageSize: pageSizeParam(),
    pageToken: param(z.string()),
  })
  .superRefine((q, ctx) => {
    checkTimeRange(ctx, q.startDate, q.endDate, { start: 'startDate', end: 'endDate' });
    checkTimeRange(ctx, q.deliveredStartDate, q.deliveredEndDate, {
      start: 'deliveredStartDate',
      end: 'deliveredEndDate',
    });
  });
export type LogsQuery = z.output<typeof LogsQuerySchema>;

/** Parses the query; the first problem's message, e.g. `status must be one of ...`. */
export const parseLogsQuery = (input: unknown) => parseWithFieldMessages(LogsQuerySchema, input);

/** One recipient of one copy (docs/api/logs.md). Timestamps RFC 3339, null when unset. */
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

/** Most events GET /v1/email/logs/{refId}/events returns (the first ones; `truncated` says more exist). */
export const MESSAGE_EVENTS_LIMIT = 1000;

/** GET /v1/email/logs/{refId}/events (docs/api/logs.md): a send's events, oldest first. */
export interface MessageEventsResponse {
  success: true;
  data: EmailEvent[];
  truncated: boolean;
}
