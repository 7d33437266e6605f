import { z } from 'zod';
import { BOUNCE_CATEGORIES } from '../deliverability/bounce-category';

/**
 * Email events (docs/events.md "The event object"). Published on Exchange.events with routing
 * key RoutingKey.emailEvent(event), wrapped in an envelope of type EMAIL_EVENT_MESSAGE whose
 * tenant_id is the sending tenant and whose payload is the spec's event object, as a webhook
 * receives it (the dispatcher fills `details.webhook_id`).
 */
export const EMAIL_EVENT_MESSAGE = 'email.event';
export const EMAIL_EVENT_MESSAGE_VERSION = 1;

export const EMAIL_EVENT_TYPES = [
  'MAIL_DELIVERED',
  'MAIL_OPENED',
  'MAIL_CLICKED',
  'MAIL_BOUNCE',
  'MAIL_SPAM',
  'MAIL_UNSUBSCRIBED',
  'MAIL_POLICY_REJECTION',
  'MAIL_GENERATION_FAILURE',
  'MAIL_GENERATION_REJECTION',
  'SMTP_ERROR',
  'PHISHING',
] as const;
export type EmailEventType = (typeof EMAIL_EVENT_TYPES)[number];

/** `webhook_options.events` toggle that subscribes to each event type (docs/api/webhooks.md). */
export const EMAIL_EVENT_SUBSCRIPTION_KEY: Record<EmailEventType, string> = {
  MAIL_DELIVERED: 'delivery',
  MAIL_OPENED: 'open',
  MAIL_CLICKED: 'click',
  MAIL_BOUNCE: 'bounce',
  MAIL_SPAM: 'spam',
  MAIL_UNSUBSCRIBED: 'unsubscribe',
  MAIL_POLICY_REJECTION: 'policy_rejection',
  MAIL_GENERATION_FAILURE: 'generation_failure',
  MAIL_GENERATION_REJECTION: 'generation_rejection',
  SMTP_ERROR: 'smtp_error',
  PHISHING: 'phishing',
};

/** `success` is true only for these (docs/events.md "The event object"). */
export const SUCCESS_EMAIL_EVENTS: readonly EmailEventType[] = [
  'MAIL_DELIVERED',
  'MAIL_OPENED',
  'MAIL_CLICKED',
  'MAIL_UNSUBSCRIBED',
];

/** Events that carry attempt, max_attempts, retry_scheduled (and provider_error when not empty). */
export const SEND_FAILURE_EMAIL_EVENTS: readonly EmailEventType[] = ['SMTP_ERROR'];

/**
 * Events that end a recipient's send (docs/architecture.md, reliability 2): exactly one per recipient. An
 * SMTP_ERROR is terminal only with `retry_scheduled: false`.
 */
export const TERMINAL_SEND_EVENTS: readonly EmailEventType[] = [
  'MAIL_DELIVERED',
  'SMTP_ERROR',
  'PHISHING',
  'MAIL_POLICY_REJECTION',
  'MAIL_GENERATION_REJECTION',
];

export function isTerminalSendEvent(event: string, retryScheduled?: boolean): boolean {
  if (event === 'SMTP_ERROR') return retryScheduled === false;
  return (TERMINAL_SEND_EVENTS as readonly string[]).includes(event);
}

export const TrackingSchema = z.object({
  time: z.string(),
  ip: z.string(),
  user_agent: z.string(),
  browser_name: z.string(),
  browser_version: z.string(),
  os: z.string(),
  device_type: z.string(),
  platform: z.string(),
  url: z.string(),
  country: z.string(),
  city: z.string(),
  region: z.string(),
  time_zone: z.string(),
  bot: z.boolean(),
});
export type Tracking = z.infer<typeof TrackingSchema>;

/** The tracking object of events that are not open, click or unsubscribe: every field zero-valued. */
export function emptyTracking(): Tracking {
  return {
    time: '',
    ip: '',
    user_agent: '',
    browser_name: '',
    browser_version: '',
    os: '',
    device_type: '',
    platform: '',
    url: '',
    country: '',
    city: '',
    region: '',
    time_zone: '',
    bot: false,
  };
}

const RFC3339_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

export const EmailEventDetailsSchema = z.object({
  ref_id: z.string().min(1),
  mailer_id: z.string(),
  email: z.array(z.string()),
  custom_args: z.record(z.unknown()).nullable(),
  message_id: z.string(),
  thread_id: z.string(),
  webhook_id: z.string(),
  event_at: z.string().regex(RFC3339_UTC, 'must be an RFC 3339 UTC timestamp'),
  tracking: TrackingSchema,
  failed_reason: z.string(),
  attempt: z.number().int().positive().optional(),
  max_attempts: z.number().int().positive().optional(),
  retry_scheduled: z.boolean().optional(),
  provider_error: z.string().min(1).optional(),
  error_code: z.string().optional(),
  num_retries: z.string().optional(),
  /** MAIL_BOUNCE and SMTP_ERROR (additive): why it failed (docs/deliverability.md "Bounce categories"). */
  bounce_category: z.enum(BOUNCE_CATEGORIES).optional(),
});
export type EmailEventDetails = z.infer<typeof EmailEventDetailsSchema>;

export const EmailEventSchema = z
  .object({
    event: z.enum(EMAIL_EVENT_TYPES),
    success: z.boolean(),
    details: EmailEventDetailsSchema,
  })
  .superRefine((e, ctx) => {
    if (e.success !== SUCCESS_EMAIL_EVENTS.includes(e.event)) {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: ['success'],
        message: `success must be ${!e.success} for ${e.event}`,
      });
    }
    if (SEND_FAILURE_EMAIL_EVENTS.includes(e.event)) {
      for (const key of ['attempt', 'max_attempts', 'retry_scheduled'] as const) {
        if (e.details[key] === undefined) {
          ctx.addIssue({
            code: z.ZodIssueCode.custom,
            path: ['details', key],
            message: `${key} is required on ${e.event}`,
          });
        }
      }
    }
  });
export type EmailEvent = z.infer<typeof EmailEventSchema>;

/** What an event about one recipient of a send names (libs/store TrackedRecipient has it). */
export interface EventSubject {
  refId: string;
  mailerId: string;
  email: string;
  customArgs: Record<string, unknown> | null;
  /** The Message-ID the recipient's copy was delivered with ('' when none). */
  messageId: string;
  /** The provider's thread the copy was delivered in (Gmail threadId, Graph conversationId; '' when none). */
  threadId: string;
}

/**
 * The spec event object about one recipient of a send, for events that come after the send
 * (tracking hits, bounces, complaints, unsubscribes): `success` per SUCCESS_EMAIL_EVENTS, the
 * copy's message_id and thread_id as its delivery recorded them, empty webhook_id (the dispatcher
 * fills it); `event_at` is replaced by the store's stamp.
 */
export function recipientEvent(
  event: EmailEventType,
  r: EventSubject,
  opts: { failedReason?: string; tracking?: Tracking } = {},
): EmailEvent {
  return {
    event,
    success: SUCCESS_EMAIL_EVENTS.includes(event),
    details: {
      ref_id: r.refId,
      mailer_id: r.mailerId,
      email: [r.email],
      custom_args: r.customArgs ?? null,
      message_id: r.messageId,
      thread_id: r.threadId,
      webhook_id: '',
      event_at: new Date().toISOString(),
      tracking: opts.tracking ?? emptyTracking(),
      failed_reason: opts.failedReason ?? '',
    },
  };
}
