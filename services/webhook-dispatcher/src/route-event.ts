/**
 * Which webhook gets what (docs/webhooks.md "What is delivered where",
 * docs/events.md), for the events of ONE account collected by the batcher. Pure:
 * the account's webhooks come in, planned request bodies come out.
 *
 * - Email events go to the tenant's EMAIL_EVENT webhook when its toggle for the event
 *   (EMAIL_EVENT_SUBSCRIPTION_KEY) is on; `imap_error` is no email event's toggle, so it never
 *   applies. The body is always a JSON array, one per account and batch, sorted oldest to newest
 *   by `event_at`.
 * - MAILER_DEACTIVATED of an SMTP-only config goes to that webhook whatever the toggles say, as
 *   its own one-element array (never batched with email events: the spec names the shape); of an
 *   IMAP-capable config it goes alone, as a single object, to the mailer's own incoming webhook.
 *   An IMAP-capable config without an incoming webhook falls back to the EMAIL_EVENT webhook, as
 *   the SMTP-only shape (a one-element array, toggles bypassed): the spec routes it only to a
 *   webhook the mailer may not have, and a deactivation nobody hears of is a silent outage.
 *   It carries no webhook_id (the spec lists it among the fields this event does not have).
 * - SENDING_PAUSED (docs/deliverability.md "Reputation and automatic pause") goes to the tenant's
 *   EMAIL_EVENT webhook whatever the toggles say, as its own one-element array, exactly like
 *   MAILER_DEACTIVATED of an SMTP-only config (no webhook_id either); no EMAIL_EVENT webhook: nobody.
 * - MAILER_WEBHOOK bodies (INCOMING_EMAIL of IMAP backfill and live sync, HISTORY_BACKFILL_*,
 *   IMAP_ERROR) go alone, as a single object, to the mailer's own incoming webhook with their
 *   extra headers; a mailer without one gets nothing.
 * - DOMAIN_VERIFICATION goes alone, as a single object, to the DOMAIN_VERIFICATION webhook.
 * - `details.webhook_id` is set to the delivering webhook; an inactive or missing webhook gets
 *   nothing (the event still updated email status upstream).
 */
import {
  type DomainVerificationEvent,
  EMAIL_EVENT_SUBSCRIPTION_KEY,
  type EmailEvent,
  type MailerDeactivatedEvent,
  type MailerWebhookMessage,
  type SendingPausedEvent,
  type WebhookEventToggles,
  isImapCapable,
} from '@mailyard/contracts';

interface Common {
  /** The bus message's time: orders events that have no event_at. */
  occurredAt: string;
  traceparent?: string;
}

export type DispatchEvent =
  | (Common & { kind: 'email'; event: EmailEvent })
  | (Common & { kind: 'domain'; event: DomainVerificationEvent })
  | (Common & { kind: 'mailer'; event: MailerDeactivatedEvent })
  | (Common & { kind: 'paused'; event: SendingPausedEvent })
  | (Common & { kind: 'mailer-object'; message: MailerWebhookMessage });

export interface RouteWebhook {
  id: string;
  active: boolean;
  events: WebhookEventToggles | null;
}

export interface AccountWebhooks {
  emailEvent: RouteWebhook | null;
  domainVerification: RouteWebhook | null;
  /** Mailers (ids) of this account that have an incoming webhook. */
  mailerWebhooks: ReadonlySet<string>;
}

export interface PlannedDelivery {
  targetKind: 'webhook' | 'mailer';
  /** webhooks.id, or the mailer id for a mailer's incoming webhook. */
  webhookId: string;
  eventTypes: string[];
  /** JSON array (EMAIL_EVENT) or single object. */
  body: unknown;
  traceparent?: string;
  extraHeaders?: Record<string, string>;
}

/** IMAP-capable configs get MAILER_DEACTIVATED on their own webhook (the capability table says which). */
const toOwnWebhook = (e: MailerDeactivatedEvent) => isImapCapable(e.details.config_type);

/**
 * The deliveries of one account's batch. `maxPerBody` (WEBHOOK_BATCH_MAX) caps an EMAIL_EVENT
 * body: a batch holding one bus message's group larger than that gets several bodies, oldest first.
 */
export function routeEvents(
  events: readonly DispatchEvent[],
  hooks: AccountWebhooks,
  maxPerBody = Number.POSITIVE_INFINITY,
): PlannedDelivery[] {
  const out: PlannedDelivery[] = [];
  const batch: Array<{ at: string; seq: number; body: unknown; type: string; traceparent?: string }> = [];
  const emailHook = hooks.emailEvent?.active ? hooks.emailEvent : null;
  const domainHook = hooks.domainVerification?.active ? hooks.domainVerification : null;

  events.forEach((e, seq) => {
    switch (e.kind) {
      case 'email': {
        if (!emailHook?.events) return;
        const toggle = EMAIL_EVENT_SUBSCRIPTION_KEY[e.event.event] as keyof WebhookEventToggles;
        if (!emailHook.events[toggle]) return;
        const body = { ...e.event, details: { ...e.event.details, webhook_id: emailHook.id } };
        batch.push({
          at: e.event.details.event_at,
          seq,
          body,
          type: e.event.event,
          traceparent: e.traceparent,
        });
        return;
      }
      case 'mailer': {
        const mailerId = e.event.details.mailer_id;
        if (toOwnWebhook(e.event) && hooks.mailerWebhooks.has(mailerId)) {
          out.push(single('mailer', mailerId, e.event.event, e.event, e.traceparent));
          return;
        }
        // SMTP-only, or IMAP-capable without its own webhook: the tenant's EMAIL_EVENT webhook.
        if (emailHook) out.push(alone(emailHook.id, e.event, e.traceparent));
        return;
      }
      case 'paused': {
        if (emailHook) out.push(alone(emailHook.id, e.event, e.traceparent));
        return;
      }
      case 'mailer-object': {
        const m = e.message;
        if (!hooks.mailerWebhooks.has(m.mailer_id)) return;
        const planned = single('mailer', m.mailer_id, m.event, m.body, e.traceparent);
        out.push(
          m.headers && Object.keys(m.headers).length > 0 ? { ...planned, extraHeaders: m.headers } : planned,
        );
        return;
      }
      case 'domain': {
        if (!domainHook) return;
        const body = { ...e.event, details: { ...e.event.details, webhook_id: domainHook.id } };
        out.push(single('webhook', domainHook.id, e.event.event, body, e.traceparent));
        return;
      }
    }
  });

  if (batch.length > 0 && emailHook) {
    // Oldest first; equal stamps keep arrival order. RFC 3339 UTC stamps compare as instants.
    batch.sort((a, b) => Date.parse(a.at) - Date.parse(b.at) || compareFraction(a.at, b.at) || a.seq - b.seq);
    const bodies: PlannedDelivery[] = [];
    for (let from = 0; from < batch.length; from += maxPerBody) {
      const part = batch.slice(from, from + maxPerBody);
      bodies.push({
        targetKind: 'webhook',
        webhookId: emailHook.id,
        eventTypes: [...new Set(part.map((b) => b.type))],
        body: part.map((b) => b.body),
        ...(part[0]!.traceparent ? { traceparent: part[0]!.traceparent } : {}),
      });
    }
    out.unshift(...bodies);
  }
  return out;
}

/** An event alone in a one-element array to the EMAIL_EVENT webhook, toggles bypassed. */
function alone(
  webhookId: string,
  event: MailerDeactivatedEvent | SendingPausedEvent,
  traceparent?: string,
): PlannedDelivery {
  return {
    targetKind: 'webhook',
    webhookId,
    eventTypes: [event.event],
    body: [event],
    ...(traceparent ? { traceparent } : {}),
  };
}

function single(
  targetKind: 'webhook' | 'mailer',
  webhookId: string,
  type: string,
  body: unknown,
  traceparent?: string,
): PlannedDelivery {
  return { targetKind, webhookId, eventTypes: [type], body, ...(traceparent ? { traceparent } : {}) };
}

/** Sub-millisecond digits beyond what Date.parse keeps (event_at may carry microseconds). */
function compareFraction(a: string, b: string): number {
  const frac = (s: string) => (/\.(\d+)/.exec(s)?.[1] ?? '').padEnd(9, '0');
  return frac(a) < frac(b) ? -1 : frac(a) > frac(b) ? 1 : 0;
}
