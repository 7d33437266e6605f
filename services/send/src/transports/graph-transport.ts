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
import { ApiTransport, type ProviderSent } from './api-transport';

export type GraphTransportOptions = GraphClientOptions;

export class GraphTransport extends ApiTransport {
  protected readonly provider = 'Microsoft Graph';
  private readonly client: GraphClient;

  constructor(mailer: { id: string }, tokens: TokenSource, options: GraphTransportOptions) {
    super(mailer);
    this.client = new GraphClient(tokens, options);
  }

  /** Thread-Id is a Gmail notion: Graph threads a reply by its In-Reply-To / References. */
  protected async send(raw: Buffer): Promise<ProviderSent> {
    const sent = await this.client.sendMime(raw);
    const messageId = sent.internetMessageId || sent.id;
    return {
      messageId,
      threadId: sent.conversationId,
      response: `Microsoft Graph accepted message ${messageId}`,
    };
  }
}
