/**
 * A local stand-in of SparkPost's Transmissions API (docs/providers.md "SparkPost client"), on
 * the shared HTTPS stand-in server (api-stand-in.ts: test CA, every request recorded, scripted
 * faults), following SparkPost's documented wire format:
 *
 * - `POST /api/v1/transmissions` with `Authorization: <api key>` (no scheme) and a JSON body
 *   `{recipients: [{address: {email}}], content: {email_rfc822}, metadata?, options?, campaign_id?}`;
 * - 200 `{"results": {"total_rejected_recipients": 0, "total_accepted_recipients": n, "id": "<transmission id>"}}`;
 * - errors as `{"errors": [{"message", "description"?, "code"?}]}`: 401 for a missing or unknown key,
 *   400/422 for a body SparkPost refuses (no recipients, RFC822 content mixed with other content,
 *   a campaign_id over 64 bytes, a malformed address).
 *
 * `keys` are the API keys it accepts (`revoke(key)` ends one, as deleting the key in SparkPost's
 * UI does); `transmissions` are the accepted ones, parsed.
 */
import { randomInt } from 'node:crypto';
import {
  type ApiStandIn,
  type BearerCheck,
  type StandInReply,
  type StandInRequest,
  startApiStandIn,
} from './api-stand-in';

export interface SparkPostTransmission {
  id: string;
  apiKey: string;
  recipients: string[];
  metadata: Record<string, unknown> | undefined;
  options: Record<string, unknown> | undefined;
  campaignId: string | undefined;
  /** `content.email_rfc822` as bytes. */
  rfc822: Buffer;
}

export interface SparkPostStandIn extends ApiStandIn {
  transmissions: SparkPostTransmission[];
  /** A new API key the stand-in accepts. */
  newKey(): string;
  /** The key stops working (401 from then on). */
  revoke(key: string): void;
  /** SparkPost's error body. */
  error(message: string, code?: string, description?: string): { errors: object[] };
}

const errorBody = (message: string, code?: string, description?: string) => ({
  errors: [{ message, ...(description ? { description } : {}), ...(code ? { code } : {}) }],
});

const EMAIL = /^[^\s@<>",]+@[^\s@<>",]+\.[^\s@<>",]+$/;

export async function startSparkPostApi(o: { tls?: boolean } = {}): Promise<SparkPostStandIn> {
  const keys = new Set<string>();
  const transmissions: SparkPostTransmission[] = [];
  const check: BearerCheck = { accepts: (a) => a !== undefined && keys.has(a) };

  const route = (req: StandInRequest): StandInReply => {
    if (req.url.pathname !== '/api/v1/transmissions')
      return { status: 404, body: errorBody('resource not found', '1600') };
    if (req.method !== 'POST') return { status: 405, body: errorBody('method not allowed', '1600') };
    if (!/^application\/json\b/i.test(String(req.headers['content-type'] ?? '')))
      return { status: 415, body: errorBody('Unsupported Media Type', '1300') };
    let body: {
      recipients?: unknown;
      content?: Record<string, unknown>;
      metadata?: Record<string, unknown>;
      options?: Record<string, unknown>;
      campaign_id?: unknown;
    };
    try {
      body = JSON.parse(req.body.toString('utf8'));
    } catch {
      return { status: 400, body: errorBody('invalid JSON', '1300', 'the request body is not JSON') };
    }
    const recipients = Array.isArray(body.recipients) ? body.recipients : [];
    const emails = recipients.map((r) => (r as { address?: { email?: unknown } })?.address?.email);
    if (emails.length === 0)
      return { status: 422, body: errorBody('At least one recipient is required', '1400') };
    if (emails.some((e) => typeof e !== 'string' || !EMAIL.test(e)))
      return {
        status: 422,
        body: errorBody('Invalid recipient address', '5002', 'address.email is not valid'),
      };
    const content = body.content ?? {};
    if (typeof content.email_rfc822 !== 'string')
      return {
        status: 422,
        body: errorBody('content is required', '1400', 'content.email_rfc822 is missing'),
      };
    if (Object.keys(content).some((k) => k !== 'email_rfc822'))
      return {
        status: 422,
        body: errorBody(
          'invalid content',
          '1400',
          'RFC-822 content is not valid with any other content type',
        ),
      };
    if (
      body.campaign_id !== undefined &&
      (typeof body.campaign_id !== 'string' || Buffer.byteLength(body.campaign_id) > 64)
    )
      return {
        status: 422,
        body: errorBody('invalid campaign_id', '1400', 'campaign_id is at most 64 bytes'),
      };
    const id = String(randomInt(1, 2 ** 47)) + String(randomInt(10000, 99999));
    transmissions.push({
      id,
      apiKey: String(req.headers.authorization),
      recipients: emails as string[],
      metadata: body.metadata,
      options: body.options,
      campaignId: body.campaign_id as string | undefined,
      rfc822: Buffer.from(content.email_rfc822, 'utf8'),
    });
    return {
      status: 200,
      body: { results: { total_rejected_recipients: 0, total_accepted_recipients: emails.length, id } },
    };
  };

  const server = await startApiStandIn({
    grant: check,
    ...(o.tls !== undefined ? { tls: o.tls } : {}),
    route,
    unauthorized: () => ({ status: 401, body: errorBody('Unauthorized.') }),
  });
  let n = 0;
  return {
    ...server,
    transmissions,
    newKey() {
      const key = `sp-test-key-${++n}-${randomInt(1e9)}`;
      keys.add(key);
      return key;
    },
    revoke(key) {
      keys.delete(key);
    },
    error: errorBody,
  };
}
