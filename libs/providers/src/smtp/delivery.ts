/**
 * What an SMTP delivery is asked and what it answers, per recipient: the shapes every transport
 * of the send service shares (SMTP pools here, the provider APIs beside them).
 */
import type { DeliveryFailure } from './classify-smtp-error';

/** A type alias (not an interface) so it fits nodemailer's indexed envelope type. */
export type Envelope = {
  from: string;
  to: string[];
};

/**
 * What happened to one envelope recipient. A provider API that assigns its own ids (Gmail API,
 * Microsoft Graph) reports them as `messageId` / `threadId`; the send events carry them as
 * `message_id` / `thread_id` instead of the built Message-ID (docs/oauth.md "Sending").
 */
export type RecipientResult =
  | {
      email: string;
      ok: true;
      response: string;
      messageId?: string;
      threadId?: string;
      /**
       * The provider accepted the recipient and reports delivery later by callback (SparkPost):
       * no MAIL_DELIVERED now; `transmissionId` is the provider's id of what it accepted.
       */
      pending?: { transmissionId: string };
    }
  | { email: string; ok: false; failure: DeliveryFailure };
