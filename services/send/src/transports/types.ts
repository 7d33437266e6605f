import type { Envelope, RecipientResult } from '@mailyard/providers';

/** What a send asks of a provider beyond the message itself. */
export interface DeliverHints {
  /** The send's `Thread-Id` header: the Gmail thread to file the message in. */
  threadId?: string;
  /** The copy being delivered: a provider that calls back (SparkPost) returns these with its events. */
  copy?: { refId: string; copyId: string };
  /** The send's campaign_id (SparkPost's `campaign_id`). */
  campaignId?: string;
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
