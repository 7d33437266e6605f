/**
 * The audit log (docs/api/audit.md): one entry per change made through the /v1 API, with the key
 * that made it, the resource and the client address; never a secret or a request body.
 * `GET /v1/audit?startDate&endDate&action&pageSize&pageToken`, newest first, cursor-paged; dates
 * parse as in the logs query (a bare date is that whole UTC day).
 */
import { z } from 'zod';
import { parseWithFieldMessages } from '../validation/messages';
import { checkTimeRange, pageSizeParam, queryParam as param, timeBoundParam } from './query-params';

export const AUDIT_ACTIONS = [
  'create',
  'update',
  'delete',
  'enable',
  'disable',
  'verify',
  'rotate',
  'replay',
  'cancel',
  'resume',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** What an entry's `resource` names (the kind of thing changed). */
export const AUDIT_RESOURCES = [
  'api_key',
  'template',
  'domain',
  'mailer',
  'oauth_app',
  'suppression',
  'webhook',
  'webhook_delivery',
  'inbound_domain',
  'inbound_address',
  'backfill',
  'email',
] as const;
export type AuditResource = (typeof AUDIT_RESOURCES)[number];

export const AuditQuerySchema = z
  .object({
    startDate: param(timeBoundParam('start')),
    endDate: param(timeBoundParam('end')),
    action: param(
      z.enum(AUDIT_ACTIONS, {
        errorMap: () => ({ message: `action must be one of ${AUDIT_ACTIONS.join(', ')}` }),
      }),
    ),
    pageSize: pageSizeParam(),
    pageToken: param(z.string()),
  })
  .superRefine((q, ctx) => {
    checkTimeRange(ctx, q.startDate, q.endDate, { start: 'startDate', end: 'endDate' });
  });
export type AuditQuery = z.output<typeof AuditQuerySchema>;

/** Parses the query; the first problem's message. */
export const parseAuditQuery = (input: unknown) => parseWithFieldMessages(AuditQuerySchema, input);

export interface AuditEntry {
  /** RFC 3339. */
  at: string;
  /** The key that made the change (null if it came without one). */
  key_id: string | null;
  action: AuditAction;
  resource: AuditResource;
  resource_id: string | null;
  /** The client address as the gateway sees it (its trust-proxy setting). */
  ip: string | null;
}

export interface ListAuditResponse {
  success: true;
  data: AuditEntry[];
  nextPageToken: string | null;
}
