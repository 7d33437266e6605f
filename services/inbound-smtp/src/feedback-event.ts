/**
 * The spec event object (docs/events.md "The event object") for mail about one of our sends, pure: the
 * recipient's send (ref_id, mailer, custom_args, the Message-ID it was delivered with) and
 * - MAIL_BOUNCE: failed_reason = classification and the remote reply (bounce-detect.ts),
 *   `bounce_category` = the recipient's category (libs/contracts classifyBounce);
 * - MAIL_SPAM: failed_reason = the complaint (arf-detect.ts);
 * - MAIL_UNSUBSCRIBED (mailto): success, tracking time = when the mail arrived and ip = the
 *   sending server's address (the one-click POST of the tracking service fills the same fields
 *   from its request).
 * `event_at` is replaced by the store's stamp (libs/store email-events.ts).
 */
import {
  type BounceCategory,
  type EmailEvent,
  type EmailEventType,
  type Tracking,
  emptyTracking,
  recipientEvent,
} from '@mailyard/contracts';
import type { TrackedRecipient } from '@mailyard/store';

export type FeedbackEventType = Extract<EmailEventType, 'MAIL_BOUNCE' | 'MAIL_SPAM' | 'MAIL_UNSUBSCRIBED'>;

export function feedbackEvent(
  event: FeedbackEventType,
  r: TrackedRecipient,
  failedReason: string,
  opts: { tracking?: Tracking; bounceCategory?: BounceCategory } = {},
): EmailEvent {
  const e = recipientEvent(event, r, { failedReason, tracking: opts.tracking ?? emptyTracking() });
  if (opts.bounceCategory) e.details.bounce_category = opts.bounceCategory;
  return e;
}

/** Tracking details of a mailto unsubscribe: when and from which server it arrived. */
export function mailtoTracking(receivedAt: Date, remoteIp: string): Tracking {
  return { ...emptyTracking(), time: receivedAt.toISOString(), ip: remoteIp };
}
