/**
 * Sender reputation and automatic pause (docs/deliverability.md "Reputation and automatic pause").
 * Per sending domain (the From domain of a send, lowercased: email_logs.sending_domain) and per
 * mailer, the rates of `invalid_recipient` bounces and of complaints over the last
 * REPUTATION_WINDOW copies sent; above PAUSE_BOUNCE_RATE or PAUSE_COMPLAINT_RATE with at least
 * PAUSE_MIN_VOLUME copies in the window, sending from that domain or mailer pauses until resumed.
 *
 * What counts (pure, here so the store and its tests read one rule):
 * - a copy SENT is a recipient's log row with a terminal send outcome that reached the wire:
 *   MAIL_DELIVERED or a final SMTP_ERROR (`retry_scheduled: false`);
 * - an invalid-recipient bounce is a MAIL_BOUNCE (a DSN, a provider's bounce) or a final
 *   SMTP_ERROR whose `details.bounce_category` is `invalid_recipient`; other categories
 *   (reputation, content, policy...) are about the sender's mail, not dead addresses, and do not count;
 * - a complaint is a MAIL_SPAM.
 */
import type { EmailEvent } from '../events/email-event';
import { SUPPRESSING_BOUNCE_CATEGORY } from './bounce-category';

export interface ReputationSettings {
  /** REPUTATION_WINDOW: the last N copies sent per scope the rates are computed over. */
  window: number;
  /** PAUSE_BOUNCE_RATE: pause above this invalid-recipient bounce rate (0..1). */
  bounceRate: number;
  /** PAUSE_COMPLAINT_RATE: pause above this complaint rate (0..1). */
  complaintRate: number;
  /** PAUSE_MIN_VOLUME: never pause with fewer copies than this in the window. */
  minVolume: number;
}

export const REPUTATION_DEFAULTS: ReputationSettings = {
  window: 1000,
  bounceRate: 0.05,
  complaintRate: 0.001,
  minVolume: 500,
};

export const PAUSE_SCOPES = ['domain', 'mailer'] as const;
export type PauseScope = (typeof PAUSE_SCOPES)[number];

export const PAUSE_METRICS = ['invalid_recipient_bounce_rate', 'complaint_rate'] as const;
export type PauseMetric = (typeof PAUSE_METRICS)[number];

/** What one recorded event adds to a copy's reputation row: nothing, a bounce or a complaint. */
export type ReputationSignal = 'invalid_bounce' | 'complaint' | null;

export function reputationSignalOf(event: Pick<EmailEvent, 'event' | 'details'>): ReputationSignal {
  const d = event.details;
  if (event.event === 'MAIL_SPAM') return 'complaint';
  const invalid = d.bounce_category === SUPPRESSING_BOUNCE_CATEGORY;
  if (event.event === 'MAIL_BOUNCE' && invalid) return 'invalid_bounce';
  if (event.event === 'SMTP_ERROR' && d.retry_scheduled === false && invalid) return 'invalid_bounce';
  return null;
}

/** The counts of one scope's window. */
export interface ReputationWindow {
  sent: number;
  invalidRecipientBounces: number;
  complaints: number;
}

export const rateOf = (n: number, sent: number) => (sent === 0 ? 0 : n / sent);

/** The metric a window breaches (bounces first), or null: nothing to pause. */
export function breachOf(
  w: ReputationWindow,
  s: ReputationSettings,
): { metric: PauseMetric; rate: number; threshold: number } | null {
  if (w.sent < s.minVolume || w.sent === 0) return null;
  const bounce = rateOf(w.invalidRecipientBounces, w.sent);
  if (bounce > s.bounceRate)
    return { metric: 'invalid_recipient_bounce_rate', rate: bounce, threshold: s.bounceRate };
  const complaint = rateOf(w.complaints, w.sent);
  if (complaint > s.complaintRate)
    return { metric: 'complaint_rate', rate: complaint, threshold: s.complaintRate };
  return null;
}

/** A rate as a percentage: one decimal from 1 %, two below (0.1 % complaint thresholds stay readable). */
export function formatRate(rate: number): string {
  const pct = rate * 100;
  return `${Number(pct.toFixed(pct >= 1 ? 1 : 2))}%`;
}

const METRIC_TEXT: Record<PauseMetric, string> = {
  invalid_recipient_bounce_rate: 'invalid-recipient bounces',
  complaint_rate: 'complaints',
};

/**
 * The 422 of POST /v1/email/send while paused: `Sending is paused for <name>: <rate> over the
 * last <n> emails`, <name> the domain for a domain pause and `mailer <id>` for a mailer pause,
 * <rate> e.g. `6.2% invalid-recipient bounces` or `0.15% complaints`, <n> the copies counted.
 */
export function pausedMessage(p: {
  scope: PauseScope;
  key: string;
  metric: PauseMetric;
  rate: number;
  window: number;
}): string {
  const name = p.scope === 'domain' ? p.key : `mailer ${p.key}`;
  return `Sending is paused for ${name}: ${formatRate(p.rate)} ${METRIC_TEXT[p.metric]} over the last ${p.window} emails`;
}
