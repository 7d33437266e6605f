import type { DeliveryFailure } from '../classify-smtp-error';

/** A type alias (not an interface) so it fits nodemailer's indexed envelope type. */
export type Envelope = {
  from: string;
  to: string[];
};

/**
 * What happened to one envelope recipient. A provider API that assigns its own ids (Gmail API,
 * Microsoft Graph) reports them as `messageId` / `threadId`; the send events carry them as
 * `message_id` / `thread_id` instead of the built Message-ID (SPEC.md "Message-ID handling").
 */
export type RecipientResult =
  | { email: string; ok: true; response: string; messageId?: string; threadId?: string }
  | { email: string; ok: false; failure: DeliveryFailure };

/** What a send asks of a provider beyond the message itself. */
export interface DeliverHints {
  /** The send's `Thread-Id` header: the Gmail thread to file the message in. */
  threadId?: string;
}

/** Delivers one built message to the envelope's recipients; never throws for delivery problems. */
export interface MessageTransport {
  /**
   * True when the provider delivers to the message's To/Cc/Bcc headers instead of an envelope
   * (Gmail API, Graph): the copy must then be built naming only the envelope's recipients
   * (header-recipients.ts).
   */
  readonly recipientsFromHeaders?: boolean;
  deliver(envelope: Envelope, raw: Buffer, hints?: DeliverHints): Promise<RecipientResult[]>;
}
