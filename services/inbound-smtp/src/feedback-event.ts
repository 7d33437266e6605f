/**
 * The spec event object (SPEC.md "Event object") for mail about one of our sends, pure: the
 * recipient's send (ref_id, mailer, custom_args, the Message-ID it was delivered with) and
 * - MAIL_BOUNCE: failed_reason = classification and the remote reply (bounce-detect.ts);
 * - MAIL_SPAM: failed_reason = the complaint (arf-detect.ts);
 * - MAIL_UNSUBSCRIBED (mailto): success, tracking time = when the mail arrived and ip = the
 *   sending server's address (the one-click POST of the tracking service fills the same fields
 *   from its request).
 * `event_at` is replaced by the store's stamp (libs/store email-events.ts).
 */
import {
  type EmailEvent,
  type EmailEventType,
  SUCCESS_EMAIL_EVENTS,
  type Tracking,
  emptyTracking,
} from '@mailyard/contracts';
import type { TrackedRecipient } from '@mailyard/store';

export type FeedbackEventType = Extract<EmailEventType, 'MAIL_BOUNCE' | 'MAIL_SPAM' | 'MAIL_UNSUBSCRIBED'>;

export function feedbackEvent(
  event: FeedbackEventType,
  r: TrackedRecipient,
  failedReason: string,
  tracking: Tracking = emptyTracking(),
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
      thread_id: '',
      webhook_id: '',
      event_at: new Date().toISOString(),
      tracking,
      failed_reason: failedReason,
    },
  };
}

/** Tracking details of a mailto unsubscribe: when and from which server it arrived. */
export function mailtoTracking(receivedAt: Date, remoteIp: string): Tracking {
  return { ...emptyTracking(), time: receivedAt.toISOString(), ip: remoteIp };
}
