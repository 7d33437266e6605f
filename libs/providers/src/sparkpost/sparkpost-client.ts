/**
 * SparkPost's Transmissions API (docs/providers.md "SparkPost client"): one request per message,
 * `POST {base}/api/v1/transmissions` with `Authorization: <api_key>` and the message as
 * `content.email_rfc822`, SparkPost's tracking off (our own tracking is in the MIME already),
 * `transactional: true`. The answer's `results.id` is the transmission id.
 *
 * Every request goes through the platform's guarded outbound API (guardedRequest over the
 * caller's guardedAgents): a mailer's `base_url` is a tenant's input, so its host is checked at
 * every connection; the operator's SPARKPOST_API_URL goes through agents that allow what the
 * operator configured. No retries here: a refused or unanswered request is one failed attempt,
 * retried on the send service's schedule (classify-sparkpost-error.ts says what each answer is).
 */
import type { IncomingMessage } from 'node:http';
import { type GuardedAgents, guardedRequest, isOutboundTargetError } from '@mailyard/platform';
import { ProviderRequestError } from '../api/errors';
import { classifySparkPostResponse, sparkPostNoAnswer } from './classify-sparkpost-error';

export interface SparkPostClientOptions {
  apiKey: string;
  /** Origin of the API, e.g. https://api.sparkpost.com or https://api.eu.sparkpost.com. */
  baseUrl: string;
  agents: GuardedAgents;
  /** Bound of one request, connect to last byte of the answer. Default 30 s. */
  timeoutMs?: number;
}

export interface Transmission {
  /** The complete message (headers and body) as SparkPost sends it. */
  rfc822: Buffer;
  /** Envelope recipients: every To, Cc and Bcc recipient of this copy. */
  recipients: readonly string[];
  /** Returned on every event of the transmission (`rcpt_meta`/`metadata`): how callbacks find our copy. */
  metadata: { ref_id: string; copy_id: string };
  campaignId?: string;
}

export interface TransmissionAccepted {
  /** SparkPost's transmission id. */
  id: string;
  accepted: number;
  rejected: number;
}

/** How much of an answer is read (SparkPost's answers are small JSON documents). */
const MAX_ANSWER_BYTES = 64 * 1024;

/** SparkPost's campaign_id limit (64 bytes). */
const MAX_CAMPAIGN_ID = 64;

/** The request body of one transmission (SparkPost's documented shape). */
export function transmissionBody(t: Transmission): string {
  const body: Record<string, unknown> = {
    options: { open_tracking: false, click_tracking: false, transactional: true },
    recipients: t.recipients.map((email) => ({ address: { email } })),
    metadata: t.metadata,
    content: { email_rfc822: t.rfc822.toString('utf8') },
  };
  if (t.campaignId) body.campaign_id = t.campaignId.slice(0, MAX_CAMPAIGN_ID);
  return JSON.stringify(body);
}

export class SparkPostClient {
  private readonly endpoint: URL;
  private readonly timeoutMs: number;

  constructor(private readonly o: SparkPostClientOptions) {
    this.endpoint = new URL('/api/v1/transmissions', o.baseUrl);
    this.timeoutMs = o.timeoutMs ?? 30_000;
  }

  /** Sends one transmission; throws the classified error when SparkPost does not accept it. */
  async send(t: Transmission): Promise<TransmissionAccepted> {
    const { status, body, retryAfter } = await this.post(transmissionBody(t));
    if (status < 200 || status > 299) throw classifySparkPostResponse(status, body, retryAfter);
    let results: { id?: unknown; total_accepted_recipients?: unknown; total_rejected_recipients?: unknown } =
      {};
    try {
      results = (JSON.parse(body) as { results?: typeof results }).results ?? {};
    } catch {
      // A 2xx is SparkPost's acceptance even when its body cannot be read.
    }
    return {
      id: typeof results.id === 'string' || typeof results.id === 'number' ? String(results.id) : '',
      accepted: Number(results.total_accepted_recipients ?? t.recipients.length) || 0,
      rejected: Number(results.total_rejected_recipients ?? 0) || 0,
    };
  }

  private post(payload: string): Promise<{ status: number; body: string; retryAfter?: string }> {
    return new Promise((resolve, reject) => {
      let settled = false;
      const fail = (err: Error) => {
        if (settled) return;
        settled = true;
        reject(noAnswer(err));
      };
      let req: ReturnType<typeof guardedRequest>;
      try {
        req = guardedRequest(
          this.endpoint,
          {
            method: 'POST',
            headers: {
              Authorization: this.o.apiKey,
              'Content-Type': 'application/json',
              Accept: 'application/json',
              'Content-Length': Buffer.byteLength(payload),
            },
          },
          this.o.agents,
        );
      } catch (err) {
        reject(err);
        return;
      }
      // Settled at the deadline even while the connection is still being made (a request
      // destroyed before it has a socket reports its error only once the socket exists).
      const timer = setTimeout(() => {
        const err = Object.assign(new Error(`no answer within ${this.timeoutMs} ms`), { code: 'ETIMEDOUT' });
        fail(err);
        req.destroy(err);
      }, this.timeoutMs);
      req.on('error', (err) => {
        clearTimeout(timer);
        fail(err);
      });
      req.on('response', (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size <= MAX_ANSWER_BYTES) chunks.push(c);
        });
        res.on('error', (err) => {
          clearTimeout(timer);
          fail(err);
        });
        res.on('end', () => {
          clearTimeout(timer);
          if (settled) return;
          settled = true;
          const retryAfter = res.headers['retry-after'];
          resolve({
            status: res.statusCode ?? 0,
            body: Buffer.concat(chunks).toString('utf8'),
            ...(typeof retryAfter === 'string' ? { retryAfter } : {}),
          });
        });
      });
      req.end(payload);
    });
  }
}

/**
 * A request without an answer: a target the guard refuses for good (a base_url that is or now
 * resolves to a private address) is a final refusal; anything else (DNS without an answer,
 * refused or reset connections, TLS, timeouts) a failed attempt to retry.
 */
function noAnswer(err: Error): Error {
  if (isOutboundTargetError(err) && !err.temporary)
    return new ProviderRequestError(`SparkPost endpoint refused: ${err.message}`, 0, err.code);
  return sparkPostNoAnswer(err as Error & { code?: string });
}
