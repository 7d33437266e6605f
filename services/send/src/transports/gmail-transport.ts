/**
 * OAuth mailers of a Google account: sends through the Gmail API (`users.messages.send`, the
 * raw MIME uploaded as built), threading with the send's `Thread-Id` (docs/oauth.md
 * "Sending": Gmail assigns its own Message-ID, so the events report Gmail's message id as
 * `message_id` and its thread id as `thread_id`). Recipients come from the headers
 * (`recipientsFromHeaders`); Bcc recipients are added as a Bcc header, which Gmail strips from
 * what recipients see. Throttling is a temporary failure (retried), a revoked grant or refused
 * account an authentication failure (the mailer is deactivated); see classify-provider-error.ts.
 *
 * Registration (services/send/src/transports/index.ts), once the token lifecycle gives a source:
 *   gmail: (mailer) => new GmailTransport(mailer, tokensFor(mailer), { apiUrl: s.gmailApiUrl }),
 */
import { GmailClient, type GmailClientOptions, type TokenSource } from '@mailyard/providers';
import { ApiTransport, type ProviderSent } from './api-transport';
import type { DeliverHints } from './types';

export type GmailTransportOptions = GmailClientOptions;

export class GmailTransport extends ApiTransport {
  protected readonly provider = 'Gmail API';
  private readonly client: GmailClient;

  constructor(mailer: { id: string }, tokens: TokenSource, options: GmailTransportOptions) {
    super(mailer);
    this.client = new GmailClient(tokens, options);
  }

  protected async send(raw: Buffer, hints: DeliverHints): Promise<ProviderSent> {
    const sent = await this.client.send(raw, { threadId: hints.threadId ?? null });
    return {
      messageId: sent.id,
      threadId: sent.threadId,
      response: `Gmail API accepted message ${sent.id} (thread ${sent.threadId})`,
    };
  }
}
