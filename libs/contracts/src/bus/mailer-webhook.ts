import { z } from 'zod';
import { webhookHeadersSchema } from '../validation/webhook-headers';

/**
 * MAILER_WEBHOOK on Exchange.events, routing key RoutingKey.mailerWebhook: one single-object
 * body for the incoming webhook of an IMAP-capable mailer (INCOMING_EMAIL from history backfill
 * and live sync, HISTORY_BACKFILL_* lifecycle events, IMAP_ERROR). The envelope's tenant_id is
 * the mailer's tenant. The webhook dispatcher posts `body` as is to the mailer's webhook, with
 * the mailer's configured headers plus `headers` (e.g. X-History-Backfill-Job-Id). A mailer
 * without an incoming webhook gets nothing.
 */
export const MAILER_WEBHOOK_MESSAGE = 'mailer.webhook';
export const MAILER_WEBHOOK_MESSAGE_VERSION = 1;

export const MailerWebhookMessageSchema = z.object({
  mailer_id: z.string().min(1),
  /** The event name of the body (INCOMING_EMAIL, HISTORY_BACKFILL_STARTED, IMAP_ERROR, ...). */
  event: z.string().min(1).max(64),
  body: z.record(z.unknown()),
  /**
   * Extra request headers, under the rule of every webhook's headers (validation/webhook-headers.ts),
   * the service's own delivery headers (X-History-Backfill-Job-Id) allowed.
   */
  headers: webhookHeadersSchema('headers', { delivery: true }).optional(),
});
export type MailerWebhookMessage = z.infer<typeof MailerWebhookMessageSchema>;

/** Lifecycle events of a history backfill job (docs/events.md "Mailbox events"). */
export const BACKFILL_EVENTS = [
  'HISTORY_BACKFILL_STARTED',
  'HISTORY_BACKFILL_PROGRESS',
  'HISTORY_BACKFILL_COMPLETED',
  'HISTORY_BACKFILL_FAILED',
] as const;
export type BackfillEventName = (typeof BACKFILL_EVENTS)[number];

/** `{event, success, details}` of a lifecycle event. */
export interface BackfillLifecycleEvent {
  event: BackfillEventName;
  success: boolean;
  details: {
    job_id: string;
    mailer_id: string;
    status: string;
    processed: number;
    target: number;
    percent: number;
    started_at: string;
    ended_at: string;
    failed_reason: string;
    event_at: string;
  };
}

/** IMAP_ERROR (payload not shown by the spec; Mailyard's layout). */
export interface ImapErrorEvent {
  event: 'IMAP_ERROR';
  success: false;
  details: { mailer_id: string; failed_reason: string; attempts: number; event_at: string };
}
