/**
 * What one SparkPost event becomes (docs/providers.md "SparkPost callbacks"), as a pure decision:
 *
 * | SparkPost `type` | event | suppresses |
 * |---|---|---|
 * | delivery | MAIL_DELIVERED (`message_id` = SparkPost's) | no |
 * | bounce, out_of_band | MAIL_BOUNCE (`error_code`, `num_retries` verbatim, `bounce_category` by class) | classes 10, 30 (`invalid_recipient`: `hard_bounce`); 90 (`unsubscribed`) |
 * | spam_complaint | MAIL_SPAM | yes |
 * | policy_rejection | MAIL_POLICY_REJECTION | no |
 * | generation_failure | MAIL_GENERATION_FAILURE | no |
 * | generation_rejection | MAIL_GENERATION_REJECTION | no |
 * | list_unsubscribe, link_unsubscribe | MAIL_UNSUBSCRIBED | yes |
 * | anything else (injection, delay, open, click, initial_open, amp_*, relay_*, ...) | nothing | no |
 *
 * `bounce_category` (docs/deliverability.md "Bounce categories") comes from SparkPost's bounce class
 * (SPARKPOST_BOUNCE_CATEGORIES); an event without a known class is classified from its
 * `raw_reason` by the one classifier (libs/contracts classifyBounce). Only `invalid_recipient`
 * suppresses as `hard_bounce`; class 90 (the recipient mailed an unsubscribe request) keeps
 * suppressing, as the unsubscribe it is.
 *
 * `failed_reason` is the bounce class's meaning (SparkPost's bounce classification codes) with
 * SparkPost's `reason`, or the provider's own reason where no class is known; `provider_error` is
 * `raw_reason`. The copy is named by `ref_id` + `copy_id` in `rcpt_meta` (or `metadata`), set by
 * our transport at send, plus the recipient `rcpt_to`. The event is stamped with SparkPost's
 * `timestamp`. Delivery and the two rejections end the copy's send (final); the others follow it.
 */
import {
  type BounceCategory,
  type EmailEventType,
  SUPPRESSING_BOUNCE_CATEGORY,
  classifyBounce,
} from '@mailyard/contracts';
import { SparkPostEventSchema, sparkPostTime } from './wire';

/** Why an event suppresses the address (the store's SuppressionReason values). */
export type SparkPostSuppression = 'hard_bounce' | 'spam_complaint' | 'unsubscribed';

const EVENT_OF: Record<string, EmailEventType> = {
  delivery: 'MAIL_DELIVERED',
  bounce: 'MAIL_BOUNCE',
  out_of_band: 'MAIL_BOUNCE',
  spam_complaint: 'MAIL_SPAM',
  policy_rejection: 'MAIL_POLICY_REJECTION',
  generation_failure: 'MAIL_GENERATION_FAILURE',
  generation_rejection: 'MAIL_GENERATION_REJECTION',
  list_unsubscribe: 'MAIL_UNSUBSCRIBED',
  link_unsubscribe: 'MAIL_UNSUBSCRIBED',
};

/** The SparkPost types that map to an event (the ones to select in SparkPost's webhook settings). */
export const SPARKPOST_MAPPED_TYPES = Object.keys(EVENT_OF);

/** SparkPost's bounce classification codes and what they mean. */
export const SPARKPOST_BOUNCE_CLASSES: Record<string, string> = {
  '1': 'Undetermined',
  '10': 'Invalid Recipient',
  '20': 'Soft Bounce',
  '21': 'DNS Failure',
  '22': 'Mailbox Full',
  '23': 'Too Large',
  '24': 'Timeout',
  '25': 'Admin Failure',
  '26': 'Smart Send Suppression',
  '30': 'Generic Bounce: No RCPT',
  '40': 'Generic Bounce',
  '50': 'Mail Block',
  '51': 'Spam Block',
  '52': 'Spam Content',
  '53': 'Prohibited Attachment',
  '54': 'Relaying Denied',
  '60': 'Auto-Reply',
  '70': 'Transient Failure',
  '80': 'Subscribe',
  '90': 'Unsubscribe',
  '100': 'Challenge-Response',
};

/**
 * Our bounce category for each of SparkPost's bounce classes. Only 10 and 30 prove the address
 * dead (`invalid_recipient`, suppressed); the blocks 50-51 are about the sender's reputation, 52-53
 * about the message, 54 and the admin failures 25-26 about policy: never suppressed.
 */
export const SPARKPOST_BOUNCE_CATEGORIES: Record<string, BounceCategory> = {
  '1': 'unknown', // undetermined
  '10': 'invalid_recipient', // invalid recipient
  '20': 'unknown', // soft bounce, no reason given
  '21': 'dns', // DNS failure
  '22': 'mailbox_full', // mailbox full
  '23': 'content', // message too large
  '24': 'unknown', // timeout
  '25': 'policy', // admin failure: refused by a configured policy (SparkPost's or the receiver's)
  '26': 'policy', // smart send suppression: SparkPost's own policy
  '30': 'invalid_recipient', // generic bounce: no RCPT (the address was not accepted)
  '40': 'unknown', // generic bounce
  '50': 'reputation', // mail block: the sender is blocked
  '51': 'reputation', // spam block: the sending IP/domain is listed
  '52': 'content', // spam content
  '53': 'content', // prohibited attachment
  '54': 'policy', // relaying denied
  '60': 'unknown', // auto-reply
  '70': 'unknown', // transient failure
  '80': 'unknown', // subscribe request
  '90': 'unknown', // unsubscribe request (suppressed as an unsubscribe, not a bounce)
  '100': 'unknown', // challenge-response
};

/** Class 90: the recipient mailed an unsubscribe request; suppressed as `unsubscribed`. */
export const SPARKPOST_UNSUBSCRIBE_CLASS = '90';

/** The category of a SparkPost bounce: by its class, else its raw reason through classifyBounce. */
export function sparkPostBounceCategory(bounceClass: string | undefined, rawReason: string): BounceCategory {
  const byClass = bounceClass ? SPARKPOST_BOUNCE_CATEGORIES[bounceClass] : undefined;
  return byClass ?? classifyBounce({ text: rawReason }).category;
}

/** Our event for a SparkPost event, ready for the store. */
export interface MappedSparkPostEvent {
  eventId: string;
  sparkPostType: string;
  event: EmailEventType;
  refId: string;
  copyId: string;
  email: string;
  at: Date;
  /** SparkPost's message_id ('' when absent). */
  messageId: string;
  failedReason: string;
  providerError?: string;
  errorCode?: string;
  numRetries?: string;
  /** MAIL_BOUNCE: why it bounced (`details.bounce_category`). */
  bounceCategory?: BounceCategory;
  suppress: SparkPostSuppression | null;
  /** Ends the copy's send (the one terminal event of the copy). */
  final: boolean;
}

export type SparkPostEventOutcome =
  | { kind: 'mapped'; mapped: MappedSparkPostEvent }
  /** A type that emits nothing. */
  | { kind: 'ignored'; type: string }
  /** A mapped type without our ref_id/copy_id or a recipient: not a send of ours. */
  | { kind: 'foreign'; type: string; eventId: string }
  /** Not a readable event. */
  | { kind: 'invalid'; why: string };

const FINAL: readonly EmailEventType[] = [
  'MAIL_DELIVERED',
  'MAIL_POLICY_REJECTION',
  'MAIL_GENERATION_REJECTION',
];

const metaText = (v: unknown): string =>
  typeof v === 'string' ? v.trim() : typeof v === 'number' ? String(v) : '';

function bounceReason(bounceClass: string | undefined, reason: string, raw: string): string {
  const meaning = bounceClass ? SPARKPOST_BOUNCE_CLASSES[bounceClass] : undefined;
  if (!meaning) return reason || raw;
  const head = `${meaning} (bounce class ${bounceClass})`;
  return reason ? `${head}: ${reason}` : head;
}

/** Maps one event object of a batch (wire.ts parseSparkPostBatch's `events`). */
export function mapSparkPostEvent(raw: unknown): SparkPostEventOutcome {
  const type = typeof (raw as { type?: unknown })?.type === 'string' ? (raw as { type: string }).type : '';
  const event = EVENT_OF[type];
  if (type && !event) return { kind: 'ignored', type };
  const parsed = SparkPostEventSchema.safeParse(raw);
  if (!parsed.success || !event) {
    const issue = parsed.success ? undefined : parsed.error.issues[0];
    return { kind: 'invalid', why: issue ? `${issue.path.join('.')}: ${issue.message}` : 'no type' };
  }
  const e = parsed.data;
  const at = sparkPostTime(e.timestamp);
  if (!at) return { kind: 'invalid', why: 'timestamp: not a time' };
  const meta = { ...(e.metadata ?? {}), ...(e.rcpt_meta ?? {}) };
  const refId = metaText(meta.ref_id);
  const copyId = metaText(meta.copy_id);
  const email = (e.rcpt_to ?? e.raw_rcpt_to ?? '').trim();
  if (!refId || !copyId || !email) return { kind: 'foreign', type, eventId: e.event_id };

  const reason = (e.reason ?? '').trim();
  const rawReason = (e.raw_reason ?? '').trim();
  let failedReason = '';
  let suppress: SparkPostSuppression | null = null;
  let bounceCategory: BounceCategory | undefined;
  switch (event) {
    case 'MAIL_BOUNCE':
      failedReason = bounceReason(e.bounce_class, reason, rawReason);
      bounceCategory = sparkPostBounceCategory(e.bounce_class, rawReason);
      if (bounceCategory === SUPPRESSING_BOUNCE_CATEGORY) suppress = 'hard_bounce';
      else if (e.bounce_class === SPARKPOST_UNSUBSCRIBE_CLASS) suppress = 'unsubscribed';
      break;
    case 'MAIL_SPAM':
      failedReason = e.fbtype ? `Spam complaint (${e.fbtype})` : 'Spam complaint';
      suppress = 'spam_complaint';
      break;
    case 'MAIL_UNSUBSCRIBED':
      suppress = 'unsubscribed';
      break;
    case 'MAIL_DELIVERED':
      break;
    default:
      failedReason = reason || rawReason || type.replace('_', ' ');
  }
  const bounce = event === 'MAIL_BOUNCE';
  return {
    kind: 'mapped',
    mapped: {
      eventId: e.event_id,
      sparkPostType: type,
      event,
      refId,
      copyId,
      email,
      at,
      messageId: e.message_id ?? '',
      failedReason,
      ...(rawReason && event !== 'MAIL_DELIVERED' ? { providerError: rawReason } : {}),
      ...(bounce && e.error_code !== undefined ? { errorCode: e.error_code } : {}),
      ...(bounce && e.num_retries !== undefined ? { numRetries: e.num_retries } : {}),
      ...(bounceCategory ? { bounceCategory } : {}),
      suppress,
      final: FINAL.includes(event),
    },
  };
}
