import { z } from 'zod';
import { ErrorText } from '../errors';
import { parseWithFieldMessages } from '../validation/messages';
import { WebhookHeaderText, webhookHeadersSchema } from '../validation/webhook-headers';
import { pageSizeParam, queryParam, timeBoundParam } from './query-params';

/**
 * Tenant-level webhook registration (docs/api/webhooks.md)
 * and the deliveries API (docs/webhooks.md). The spec's three error texts live in ErrorText;
 * the rest of the texts are ours and live here.
 */

export const WEBHOOK_EVENTS = ['EMAIL_EVENT', 'DOMAIN_VERIFICATION'] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** `webhook_options.events` toggles, all boolean and false by default (docs/api/webhooks.md). */
export const WEBHOOK_EVENT_TOGGLES = [
  'delivery',
  'open',
  'click',
  'bounce',
  'spam',
  'unsubscribe',
  'policy_rejection',
  'generation_failure',
  'generation_rejection',
  'smtp_error',
  'phishing',
  'imap_error',
] as const;
export type WebhookEventToggle = (typeof WEBHOOK_EVENT_TOGGLES)[number];
export type WebhookEventToggles = Record<WebhookEventToggle, boolean>;

/** Rule 1: the ten core toggles; `phishing` alone and `imap_error` do not satisfy it. */
export const CORE_WEBHOOK_EVENT_TOGGLES: readonly WebhookEventToggle[] = WEBHOOK_EVENT_TOGGLES.filter(
  (t) => t !== 'phishing' && t !== 'imap_error',
);

export const WebhookErrorText = {
  webhookUrlRequired: 'webhook_url is required',
  webhookUrlInvalid: 'webhook_url must be an https URL',
  webhookUrlInsecureInvalid: 'webhook_url must be an http or https URL',
  webhookUrlTooLong: 'webhook_url must be at most 2048 characters',
  webhookUrlPrivate:
    'webhook_url must be publicly reachable: it resolves to a private, loopback or link-local address',
  webhookUrlUnresolvable: 'webhook_url host name does not resolve',
  webhookUrlUnreachable: 'webhook_url could not be connected to',
  eventRequired: 'event is required',
  eventInvalid: 'event must be one of EMAIL_EVENT, DOMAIN_VERIFICATION',
  methodRequired: 'method is required',
  methodInvalid: 'method must be POST',
  headersInvalid: WebhookHeaderText.invalid('headers'),
  headerNameInvalid: WebhookHeaderText.name('headers'),
  tooManyHeaders: WebhookHeaderText.tooMany('headers'),
  activeInvalid: 'active must be a boolean',
  webhookNotFound: 'Webhook not found',
  deliveryNotFound: 'Webhook delivery not found',
  deliveryWebhookGone: 'The webhook of this delivery no longer exists',
  deliveryWebhookInactive: 'The webhook of this delivery is deactivated',
  invalidDeliveryStatus: 'status must be one of pending, retrying, delivered, dropped',
  replayLimited: (limit: number, windowS: number) =>
    `Replay limit exceeded: a delivery may be replayed at most ${limit} times per ${windowS} s`,
} as const;

const headersSchema = webhookHeadersSchema('headers');

const togglesSchema = z
  .object(
    Object.fromEntries(WEBHOOK_EVENT_TOGGLES.map((t) => [t, z.boolean().optional()])) as Record<
      WebhookEventToggle,
      z.ZodOptional<z.ZodBoolean>
    >,
    { invalid_type_error: 'webhook_options.events must be an object' },
  )
  .transform(
    (e) => Object.fromEntries(WEBHOOK_EVENT_TOGGLES.map((t) => [t, e[t] === true])) as WebhookEventToggles,
  );

const optionsSchema = z.object(
  { events: togglesSchema.optional() },
  { invalid_type_error: 'webhook_options must be an object' },
);

const urlSchema = z
  .string({
    required_error: WebhookErrorText.webhookUrlRequired,
    invalid_type_error: WebhookErrorText.webhookUrlInvalid,
  })
  .trim()
  .min(1, WebhookErrorText.webhookUrlRequired)
  .max(2048, WebhookErrorText.webhookUrlTooLong);

const eventSchema = z.enum(WEBHOOK_EVENTS, {
  errorMap: (issue) => ({
    message:
      issue.code === 'invalid_type' && issue.received === 'undefined'
        ? WebhookErrorText.eventRequired
        : WebhookErrorText.eventInvalid,
  }),
});

/** `POST` only (docs/api/webhooks.md); the case of the method name does not matter. */
const methodSchema = z
  .string({
    required_error: WebhookErrorText.methodRequired,
    invalid_type_error: WebhookErrorText.methodInvalid,
  })
  .transform((v) => v.toUpperCase())
  .refine((v): v is 'POST' => v === 'POST', WebhookErrorText.methodInvalid);

/** `null` counts as absent, as in the send payload. */
const nullable = <T extends z.ZodTypeAny>(s: T) =>
  z.preprocess((v) => (v === null ? undefined : v), s.optional());

export const RegisterWebhookSchema = z.object({
  webhook_url: urlSchema,
  event: eventSchema,
  method: methodSchema,
  headers: nullable(headersSchema),
  webhook_options: nullable(optionsSchema),
});
export type RegisterWebhookInput = z.output<typeof RegisterWebhookSchema>;

export const UpdateWebhookSchema = z.object({
  event: eventSchema,
  webhook_url: nullable(urlSchema),
  method: nullable(methodSchema),
  headers: nullable(headersSchema),
  webhook_options: nullable(optionsSchema),
  active: nullable(z.boolean({ invalid_type_error: WebhookErrorText.activeInvalid })),
});
export type UpdateWebhookInput = z.output<typeof UpdateWebhookSchema>;

export const WebhookEventBodySchema = z.object({ event: eventSchema });

/**
 * Field rules of docs/api/webhooks.md: the toggles an EMAIL_EVENT webhook keeps,
 * null for a DOMAIN_VERIFICATION webhook, or the spec's message. `required` is false on update
 * when webhook_options is omitted (the stored options stay).
 */
export function checkWebhookOptions(
  event: WebhookEvent,
  options: { events?: WebhookEventToggles } | undefined,
  required: boolean,
): { ok: true; events: WebhookEventToggles | null } | { ok: false; error: string } {
  if (event === 'DOMAIN_VERIFICATION') {
    return options === undefined
      ? { ok: true, events: null }
      : { ok: false, error: ErrorText.webhookOptionsForDomain };
  }
  if (options === undefined && !required) return { ok: true, events: null };
  const events = options?.events;
  if (!events || !CORE_WEBHOOK_EVENT_TOGGLES.some((t) => events[t]))
    return { ok: false, error: ErrorText.webhookEventsRequired };
  return { ok: true, events };
}

/** Parses a webhook request body with field-naming messages; the first problem wins. */
export const parseWebhookBody = parseWithFieldMessages;

/** The webhook object as GET /v1/webhook returns it (docs/api/webhooks.md). */
export interface WebhookRegistration {
  webhook_id: string;
  event: WebhookEvent;
  url: string;
  method: 'POST';
  active: boolean;
  /** `{events}` for EMAIL_EVENT (every toggle), null for DOMAIN_VERIFICATION. */
  options: { events: WebhookEventToggles } | null;
  headers_present: string[];
  created_at: string;
  updated_at: string;
}

export interface RegisterWebhookResponse {
  success: true;
  message: string;
  webhook_id: string;
  /** Standard Webhooks signing secret (`whsec_<base64>`), shown here once. */
  signing_secret: string;
}

export interface ListWebhooksResponse {
  success: true;
  webhooks: WebhookRegistration[];
}

// ---------------------------------------------------------------------------------------------
// Deliveries

/**
 * A delivery's status: `pending` (waiting for its first attempt), `retrying` (an attempt failed,
 * another is scheduled), `delivered` (a 2xx answer), `dropped` (retry window used up, or the
 * webhook was deleted or deactivated).
 */
export const WEBHOOK_DELIVERY_STATUSES = ['pending', 'retrying', 'delivered', 'dropped'] as const;
export type WebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number];

/** GET /v1/webhook/deliveries query. `event` matches any event type in the delivery's body. */
export const DeliveriesQuerySchema = z.object({
  event: queryParam(
    z
      .string()
      .regex(/^[A-Z_]{1,64}$/, 'event must be an event name such as MAIL_DELIVERED or DOMAIN_VERIFICATION'),
  ),
  status: queryParam(
    z.enum(WEBHOOK_DELIVERY_STATUSES, {
      errorMap: () => ({ message: WebhookErrorText.invalidDeliveryStatus }),
    }),
  ),
  startDate: queryParam(timeBoundParam('start')),
  endDate: queryParam(timeBoundParam('end')),
  pageSize: pageSizeParam(),
  pageToken: queryParam(z.string()),
});
export type DeliveriesQuery = z.output<typeof DeliveriesQuerySchema>;

export interface WebhookDeliveryAttempt {
  attempt: number;
  at: string;
  /** HTTP status, null when no answer came (connection error, timeout). */
  status_code: number | null;
  latency_ms: number;
  /** Empty for a 2xx answer. */
  error: string;
}

export interface WebhookDeliveryView {
  delivery_id: string;
  webhook_id: string;
  event_types: string[];
  status: WebhookDeliveryStatus;
  attempts: WebhookDeliveryAttempt[];
  next_attempt_at: string | null;
  /** Why a dropped delivery was dropped; empty otherwise. */
  dropped_reason: string;
  replay_of: string | null;
  created_at: string;
  updated_at: string;
}

export interface ListDeliveriesResponse {
  success: true;
  data: WebhookDeliveryView[];
  nextPageToken: string | null;
  totalCount: number;
}

/** Shared with the inbound routing API (docs/api/inbound.md: URL and header rules as for webhooks). */
export const WebhookHeadersSchema = headersSchema;
