/**
 * Delivers a copy through a SparkPost mailer (docs/providers.md "SparkPost client", DESIGN
 * "Provider mailers and their callbacks"): our own MIME (Message-ID rules, our tracking, DKIM
 * when the From domain is a verified domain of the tenant; built and signed by the consumer) goes
 * to SparkPost's Transmissions API as one transmission per copy, every envelope recipient of the
 * copy (To, Cc and Bcc) in `recipients` (Bcc recipients are in no header: the builder never
 * writes them), `metadata: {ref_id, copy_id}` so SparkPost's callbacks find the copy, SparkPost's
 * own tracking off.
 *
 * A 2xx means accepted by SparkPost, not delivered: every recipient's result is `ok` with
 * `pending` (the consumer records the acceptance, the log stays QUEUED and no MAIL_DELIVERED is
 * emitted; the callback reports the outcome). A refusal is classified once (libs/providers
 * classify-sparkpost-error.ts) and worded by classify-provider-error.ts: 401/403 deactivate the
 * mailer (`provider_auth_error`), 429/5xx/no answer are retried attempts, other 4xx are final
 * with SparkPost's message as `provider_error`.
 */
import type { Envelope, RecipientResult, SparkPostClient } from '@mailyard/providers';
import { classifyProviderError } from './classify-provider-error';
import type { DeliverHints, MessageTransport } from './types';

export const SPARKPOST = 'SparkPost';

/** What a refused key tells the sender to do (the mailer is deactivated until then). */
export const SPARKPOST_REAUTH = 'update its api_key (PUT /v1/mailer/sparkpost) to reactivate it';

export class SparkPostTransport implements MessageTransport {
  constructor(private readonly client: Pick<SparkPostClient, 'send'>) {}

  async deliver(envelope: Envelope, raw: Buffer, hints: DeliverHints = {}): Promise<RecipientResult[]> {
    if (!hints.copy) throw new Error('SparkPostTransport needs the copy (ref_id, copy_id) of the delivery');
    try {
      const accepted = await this.client.send({
        rfc822: raw,
        recipients: envelope.to,
        metadata: { ref_id: hints.copy.refId, copy_id: hints.copy.copyId },
        ...(hints.campaignId ? { campaignId: hints.campaignId } : {}),
      });
      const response = `Accepted by SparkPost (transmission ${accepted.id || 'without id'})`;
      return envelope.to.map((email) => ({
        email,
        ok: true,
        response,
        pending: { transmissionId: accepted.id },
      }));
    } catch (err) {
      const failure = classifyProviderError(err, { provider: SPARKPOST, reauth: SPARKPOST_REAUTH });
      return envelope.to.map((email) => ({ email, ok: false, failure }));
    }
  }
}
