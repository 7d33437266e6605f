/**
 * OAuth mailers of a Google account: sends through the Gmail API (`users.messages.send`, the
 * raw MIME uploaded as built), threading with the send's `Thread-Id` (SPEC.md "Message-ID
 * handling": Gmail assigns its own Message-ID, so the events report Gmail's message id as
 * `message_id` and its thread id as `thread_id`). Recipients come from the headers
 * (`recipientsFromHeaders`); Bcc recipients are added as a Bcc header, which Gmail strips from
 * what recipients see. Throttling is a temporary failure (retried), a revoked grant or refused
 * account an authentication failure (the mailer is deactivated); see classify-provider-error.ts.
 *
 * Registration (services/send/src/transports/index.ts), once the token lifecycle gives a source:
 *   gmail: (mailer) => new GmailTransport(mailer, tokensFor(mailer), { apiUrl: s.gmailApiUrl }),
 */
import { GmailClient, type GmailClientOptions, type TokenSource } from '@mailyard/providers';
import { deliverThroughApi } from './api-transport';
import type { DeliverHints, Envelope, MessageTransport, RecipientResult } from './types';

export type GmailTransportOptions = GmailClientOptions;

export class GmailTransport implements MessageTransport {
  readonly recipientsFromHeaders = true;
  private readonly client: GmailClient;

  constructor(
    readonly mailer: { id: string },
    tokens: TokenSource,
    options: GmailTransportOptions,
  ) {
    this.client = new GmailClient(tokens, options);
  }

  deliver(envelope: Envelope, raw: Buffer, hints: DeliverHints = {}): Promise<RecipientResult[]> {
    return deliverThroughApi('Gmail API', envelope, raw, hints, async (routed) => {
      const sent = await this.client.send(routed, { threadId: hints.threadId ?? null });
      return {
        messageId: sent.id,
        threadId: sent.threadId,
        response: `Gmail API accepted message ${sent.id} (thread ${sent.threadId})`,
      };
    });
  }
}
