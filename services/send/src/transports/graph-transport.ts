/**
 * OAuth mailers of a Microsoft account: sends through Microsoft Graph with the MIME as built
 * (a draft from MIME, then send: GraphClient.sendMime), so the Message-ID the service gave the
 * message is kept. The events report the sent message's internetMessageId as `message_id` (the
 * id replies name in In-Reply-To) and its conversationId as `thread_id` (what live mail from
 * Outlook reports as `thread-id`). Graph threads replies by their In-Reply-To/References; a
 * `Thread-Id` header is a Gmail notion and is ignored here. Recipients come from the headers
 * (`recipientsFromHeaders`), Bcc recipients added as a Bcc header. Failures as for Gmail
 * (classify-provider-error.ts).
 *
 * Registration (services/send/src/transports/index.ts), once the token lifecycle gives a source:
 *   graph: (mailer) => new GraphTransport(mailer, tokensFor(mailer), { graphUrl: s.microsoftGraphUrl }),
 */
import { GraphClient, type GraphClientOptions, type TokenSource } from '@mailyard/providers';
import { deliverThroughApi } from './api-transport';
import type { Envelope, MessageTransport, RecipientResult } from './types';

export type GraphTransportOptions = GraphClientOptions;

export class GraphTransport implements MessageTransport {
  readonly recipientsFromHeaders = true;
  private readonly client: GraphClient;

  constructor(
    readonly mailer: { id: string },
    tokens: TokenSource,
    options: GraphTransportOptions,
  ) {
    this.client = new GraphClient(tokens, options);
  }

  deliver(envelope: Envelope, raw: Buffer): Promise<RecipientResult[]> {
    return deliverThroughApi('Microsoft Graph', envelope, raw, {}, async (routed) => {
      const sent = await this.client.sendMime(routed);
      return {
        messageId: sent.internetMessageId || sent.id,
        threadId: sent.conversationId,
        response: `Microsoft Graph accepted message ${sent.internetMessageId || sent.id}`,
      };
    });
  }
}
