/**
 * What the Gmail API and Microsoft Graph transports share (ApiTransport): make the headers name
 * exactly the envelope (header-recipients.ts), hand the message to the provider client once for
 * every recipient (one API message), and turn the outcome into one RecipientResult per
 * recipient, success with the provider's ids or the classified failure.
 */
import { localFailure } from '@mailyard/providers';
import type { Envelope, RecipientResult } from '@mailyard/providers';
import { classifyProviderError } from './classify-provider-error';
import { routeByHeaders } from './header-recipients';
import type { DeliverHints, MessageTransport } from './types';

export interface ProviderSent {
  /** Reported as the events' `message_id`. */
  messageId: string;
  /** Reported as the events' `thread_id`. */
  threadId: string;
  /** The SMTP-like response text of the log entry. */
  response: string;
}

export const OUTSIDE_ENVELOPE_REASON = 'The message names recipients outside this delivery';

/** A transport whose provider takes the MIME message through its API and delivers to its headers. */
export abstract class ApiTransport implements MessageTransport {
  readonly recipientsFromHeaders = true;
  /** Names the provider in failure texts. */
  protected abstract readonly provider: string;

  constructor(readonly mailer: { id: string }) {}

  /** Sends the routed message through the provider's API; throws what the client throws. */
  protected abstract send(raw: Buffer, hints: DeliverHints): Promise<ProviderSent>;

  deliver(envelope: Envelope, raw: Buffer, hints: DeliverHints = {}): Promise<RecipientResult[]> {
    return deliverThroughApi(this.provider, envelope, raw, hints, (routed) => this.send(routed, hints));
  }
}

async function deliverThroughApi(
  provider: string,
  envelope: Envelope,
  raw: Buffer,
  hints: DeliverHints,
  send: (raw: Buffer) => Promise<ProviderSent>,
): Promise<RecipientResult[]> {
  const routed = routeByHeaders(raw, envelope.to);
  if (!routed.ok) {
    const failure = localFailure('permanent', OUTSIDE_ENVELOPE_REASON, routed.outside.join(', '));
    return envelope.to.map((email) => ({ email, ok: false, failure }));
  }
  try {
    const sent = await send(routed.raw);
    return envelope.to.map((email) => ({
      email,
      ok: true,
      response: sent.response,
      messageId: sent.messageId,
      threadId: sent.threadId,
    }));
  } catch (err) {
    const failure = classifyProviderError(err, {
      provider,
      ...(hints.threadId ? { threadId: hints.threadId } : {}),
    });
    return envelope.to.map((email) => ({ email, ok: false, failure }));
  }
}
