/**
 * What one SparkPost event becomes (docs/providers.md "SparkPost callbacks"), as a pure decision:
 *
 * | SparkPost `type` | event | suppresses |
 * |---|---|---|
 * | delivery | MAIL_DELIVERED (`message_id` = SparkPost's) | no |
 * | bounce, out_of_band | MAIL_BOUNCE (`error_code`, `num_retries` verbatim) | bounce classes 10, 30, 90 |
 * | spam_complaint | MAIL_SPAM | yes |
 * | policy_rejection | MAIL_POLICY_REJECTION | no |
 * | generation_failure | MAIL_GENERATION_FAILURE | no |
 * | generation_rejection | MAIL_GENERATION_REJECTION | no |
 * | list_unsubscribe, link_unsubscribe | MAIL_UNSUBSCRIBED | yes |
 * | anything else (injection, delay, open, click, initial_open, amp_*, relay_*, ...) | nothing | no |
 *
 * `failed_reason` is the bounce class's meaning (SparkPost's bounce classification codes) with
 * SparkPost's `reason`, or the provider's own reason where no class is known; `provider_error` is
 * `raw_reason`. The copy is named by `ref_id` + `copy_id` in `rcpt_meta` (or `metadata`), set by
 * our transport at send, plus the recipient `rcpt_to`. The event is stamped with SparkPost's
 * `timestamp`. Delivery and the two rejections end the copy's send (final); the others follow it.
 */
import type { EmailEventType } from '@mailyard/contracts';
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

/** Hard bounce classes: the address is bad for good (suppressed). Block classes 50-54 never are. */
export const SPARKPOST_HARD_BOUNCE_CLASSES: readonly string[] = ['10', '30', '90'];

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
  switch (event) {
    case 'MAIL_BOUNCE':
      failedReason = bounceReason(e.bounce_class, reason, rawReason);
      if (e.bounce_class && SPARKPOST_HARD_BOUNCE_CLASSES.includes(e.bounce_class)) suppress = 'hard_bounce';
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
      suppress,
      final: FINAL.includes(event),
    },
  };
}
