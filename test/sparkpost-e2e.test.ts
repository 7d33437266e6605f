/**
 * SparkPost as a new user meets it (issue 25, "Done when"), through the public HTTP API only, with
 * every service running on the real PostgreSQL, RabbitMQ and Redis: the gateway (its own port),
 * send, tracking (the callback endpoint) and the webhook dispatcher, a local HTTPS stand-in of
 * SparkPost's Transmissions API (libs/testkit/peers/sparkpost-api.ts) as the mailer's `base_url`,
 * and a local HTTPS receiver as the tenant's EMAIL_EVENT webhook.
 *
 * 1. POST /v1/mailer/sparkpost; the callback url/username/password it returns are what the user
 *    pastes into SparkPost.
 * 2. A send to, cc and bcc reaches the stand-in as ONE transmission: our MIME (no Bcc header),
 *    metadata {ref_id, copy_id}.
 * 3. SparkPost event batches built from SparkPost's documented samples (samples.ts), carrying the
 *    real ref_id/copy_id and recipients, posted to the callback URL with the returned credentials,
 *    come out as the spec's events at the webhook (error_code and num_retries verbatim), in the
 *    logs, the suppression list (hard bounce, complaint, unsubscribe; never a block bounce) and
 *    GET /v1/stats.
 * 4. The same batch again emits nothing (waited for by the batch table and the duplicate metric).
 * 5. Wrong, missing and another tenant's credentials on this mailer's URL: 401.
 * 6. A 503 then success is retried and accepted; a revoked key deactivates the mailer
 *    (MAILER_DEACTIVATED at the webhook, GET shows it).
 */
import { createHmac } from 'node:crypto';
import type { EmailEvent } from '@mailyard/contracts';
import { start as startGateway } from '@mailyard/gateway';
import {
  type RunningService,
  type ServiceContext,
  closeContext,
  configFrom,
  createLogger,
  metricsRegistry,
  openContext,
} from '@mailyard/platform';
import { start as startSend } from '@mailyard/send';
import { createTenant, providerCallbacks } from '@mailyard/store';
import { eventually } from '@mailyard/testkit/eventually';
import { messageHeaders } from '@mailyard/testkit/peers/api-stand-in';
import {
  type SparkPostStandIn,
  type SparkPostTransmission,
  startSparkPostApi,
} from '@mailyard/testkit/peers/sparkpost-api';
import { type WebhookReceiver, startWebhookReceiver } from '@mailyard/testkit/peers/webhook-receiver';
import { freePort } from '@mailyard/testkit/process';
import { type Stores, createStores } from '@mailyard/testkit/stores';
import { start as startTracking } from '@mailyard/tracking';
import { start as startDispatcher } from '@mailyard/webhook-dispatcher';
import { sparkPostSample } from '../libs/providers/src/sparkpost/events/samples';

jest.setTimeout(180_000);

let stores: Stores;
let ctx: ServiceContext;
let services: RunningService[] = [];
let sparkpost: SparkPostStandIn;
let hooks: WebhookReceiver;
let api = '';
let tenant: { id: string; auth: Record<string, string> };
let other: { id: string; auth: Record<string, string> };
let apiKey = '';
let signingSecret = '';
let mailer: { mailer_id: string; callback: { url: string; username: string; password: string } };

beforeAll(async () => {
  stores = await createStores();
  sparkpost = await startSparkPostApi();
  hooks = await startWebhookReceiver({ tls: true });
  const [port, trackingPort] = [await freePort(), await freePort()];
  ctx = await openContext(
    configFrom({
      ...stores.env,
      LOG_LEVEL: 'error',
      HOST: '127.0.0.1',
      PORT: String(port),
      TRACKING_PORT: String(trackingPort),
      // The callback URL the mailer API shows is the tracking service's public URL.
      TRACKING_BASE_URL: `http://127.0.0.1:${trackingPort}`,
      TRACKING_CALLBACK_POLL_MS: '200',
      OUTBOX_POLL_MS: '50',
      API_KEY_CACHE_MS: '0',
      SEND_RETRY_DELAYS: '0',
      SEND_MAX_ATTEMPTS: '3',
      // The stand-in is the mailer's base_url on 127.0.0.1; the webhook receiver too.
      MAILER_ALLOW_PRIVATE_HOSTS: '1',
      WEBHOOK_ALLOW_INSECURE: '1',
      WEBHOOK_BATCH_WAIT_MS: '50',
    }),
    createLogger('sparkpost-e2e', 'error'),
  );
  const a = await createTenant(ctx.db, { name: 'sp-e2e', tier: 'enterprise' });
  const b = await createTenant(ctx.db, { name: 'sp-e2e-other', tier: 'enterprise' });
  tenant = { id: a.id, auth: { Authorization: `Bearer ${a.apiKey}` } };
  other = { id: b.id, auth: { Authorization: `Bearer ${b.apiKey}` } };
  services = [
    await startGateway(ctx),
    await startSend(ctx),
    await startTracking(ctx),
    await startDispatcher(ctx),
  ];
  api = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  for (const s of services.reverse()) await s.stop();
  if (ctx) await closeContext(ctx);
  await hooks?.close();
  await sparkpost?.close();
  await stores?.drop();
});

/** A JSON answer of the API (fields checked by the assertions). */
type Answer = Record<string, unknown>;

/** A call to the gateway's public API as `who`; the parsed JSON answer and the status. */
async function call(
  who: { auth: Record<string, string> },
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: Answer }> {
  const res = await fetch(`${api}${path}`, {
    method,
    headers: { ...who.auth, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Answer };
}

async function ok(who: { auth: Record<string, string> }, method: string, path: string, body?: unknown) {
  const res = await call(who, method, path, body);
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

async function createMailer(who: { auth: Record<string, string> }, key: string) {
  return (await ok(who, 'POST', '/v1/mailer/sparkpost', {
    name: 'SparkPost',
    email: 'news@brand.example',
    config: { api_key: key, base_url: sparkpost.url },
  })) as unknown as typeof mailer;
}

const basic = (username: string, password: string) =>
  `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;

/** POSTs a SparkPost batch to a callback URL as SparkPost does (JSON, Basic auth when given). */
async function postCallback(url: string, batch: unknown, authorization?: string) {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      'User-Agent': 'SparkPost',
      ...(authorization ? { Authorization: authorization } : {}),
    },
    body: JSON.stringify(batch),
  });
  return {
    status: res.status,
    authenticate: res.headers.get('www-authenticate'),
    body: await res.text(),
  };
}
const postAsMailer = (batch: unknown) =>
  postCallback(mailer.callback.url, batch, basic(mailer.callback.username, mailer.callback.password));

async function send(body: Record<string, unknown>): Promise<string> {
  const res = await ok(tenant, 'POST', '/v1/email/send', {
    from: { email: 'news@brand.example', name: 'Brand' },
    mailer_id: mailer.mailer_id,
    subject: 'Spring sale',
    content: [{ type: 'text/plain', value: 'Everything is 20% off' }],
    ...body,
  });
  return res.ref_id as string;
}

const transmissionOf = (refId: string) =>
  eventually(
    () => sparkpost.transmissions.find((t) => t.metadata?.ref_id === refId),
    `the transmission of ${refId}`,
  );
const requestsOf = (refId: string) =>
  sparkpost.requests.filter((r) => r.body.toString('utf8').includes(`"ref_id":"${refId}"`));

/** The SparkPost send of a transmission as the samples name it: our metadata, SparkPost's ids. */
interface Sent {
  refId: string;
  copyId: string;
  transmissionId: string;
}
const sentOf = (t: SparkPostTransmission): Sent => ({
  refId: String(t.metadata?.ref_id),
  copyId: String(t.metadata?.copy_id),
  transmissionId: t.id,
});

/** A recent provider time in whole seconds (SparkPost sends unix seconds). */
const T = Math.floor(Date.now() / 1000) - 60;
let eventSeq = 0;
/**
 * SparkPost's documented sample of `type` about `to` of `sent`, with a fresh event id, a later
 * time than the previous one and a message_id of its own.
 */
function sample(type: string, sent: Sent, to: string, o: Record<string, unknown> = {}) {
  eventSeq += 1;
  return sparkPostSample(type, {
    event_id: `${7_100_000_000 + eventSeq}`,
    timestamp: String(T + eventSeq),
    transmission_id: sent.transmissionId,
    message_id: `0004${sent.transmissionId.slice(-8)}${String(eventSeq).padStart(4, '0')}`,
    // SparkPost's rcpt_to is the lowercased envelope address, raw_rcpt_to as it was sent.
    rcpt_to: to.toLowerCase(),
    raw_rcpt_to: to,
    // SparkPost merges the transmission's metadata into rcpt_meta.
    rcpt_meta: { ref_id: sent.refId, copy_id: sent.copyId },
    ...o,
  });
}

/** Webhook bodies received (one per delivery: a retried delivery is counted once). */
const delivered = () =>
  hooks
    .deliveries('/events')
    .flatMap((r) => (Array.isArray(r.json) ? (r.json as EmailEvent[]) : [r.json as EmailEvent]));
const hookEventsOf = (refId: string) => delivered().filter((e) => e.details.ref_id === refId);
const hookEvent = (refId: string, event: string, email?: string) =>
  eventually(
    () =>
      hookEventsOf(refId).find(
        (e) =>
          e.event === event &&
          (email === undefined || e.details.email.some((a) => a.toLowerCase() === email.toLowerCase())),
      ),
    `${event} of ${refId}${email ? ` for ${email}` : ''} at the webhook`,
  );

const callbackMetric = async (outcome: string) => {
  const m = await metricsRegistry.getSingleMetric('mailyard_provider_callback_events_total')?.get();
  return m?.values.find((v) => v.labels.outcome === outcome && v.labels.provider === 'sparkpost')?.value ?? 0;
};
const batchesDrained = () =>
  eventually(async () => (await providerCallbacks.pending(ctx.db)) === 0, 'the callback batches processed');

const logsOf = async (refId: string) =>
  (
    (await ok(tenant, 'GET', `/v1/email/logs?refId=${refId}`)).data as Array<{
      recipient: string;
      status: string;
      last_event: string | null;
      message_id: string;
    }>
  ).sort((x, y) => x.recipient.localeCompare(y.recipient));

// The steps build on each other, in order: one user's afternoon.
let first: Sent;
const later: Record<string, Sent> = {};
let deliveryBatch: unknown[];

describe('SparkPost end to end', () => {
  it('1. creates the mailer and registers the webhook through the API', async () => {
    apiKey = sparkpost.newKey();
    mailer = await createMailer(tenant, apiKey);
    expect(mailer.mailer_id).toMatch(/^sparkpost_/);
    expect(mailer.callback).toEqual({
      url: expect.stringMatching(new RegExp(`/callbacks/sparkpost/${mailer.mailer_id}$`)),
      username: expect.any(String),
      password: expect.any(String),
    });
    const got = await ok(tenant, 'GET', `/v1/mailer/${mailer.mailer_id}`);
    expect(got.data).toMatchObject({
      config_type: 'sparkpost',
      state: 'active',
      config: { base_url: sparkpost.url, api_key_set: true },
    });
    expect(JSON.stringify(got)).not.toContain(mailer.callback.password);
    expect(JSON.stringify(got)).not.toContain(apiKey);

    const registered = await ok(tenant, 'POST', '/v1/webhook/register', {
      webhook_url: hooks.url('/events'),
      event: 'EMAIL_EVENT',
      method: 'POST',
      webhook_options: {
        events: {
          delivery: true,
          bounce: true,
          spam: true,
          unsubscribe: true,
          policy_rejection: true,
          generation_failure: true,
          generation_rejection: true,
          smtp_error: true,
        },
      },
    });
    signingSecret = String(registered.signing_secret);
    expect(signingSecret).toMatch(/^whsec_/);
    expect(hooks.url('/events')).toMatch(/^https:/);
  });

  it('2. sends to, cc and bcc as ONE transmission with our MIME and metadata', async () => {
    const refId = await send({
      to: [{ email: 'ann@example.com' }],
      cc: [{ email: 'bob@example.com' }],
      bcc: [{ email: 'cat@example.com' }],
    });
    const t = await transmissionOf(refId);
    expect(t.apiKey).toBe(apiKey);
    expect([...t.recipients].sort()).toEqual(['ann@example.com', 'bob@example.com', 'cat@example.com']);
    expect(t.metadata).toEqual({ ref_id: refId, copy_id: expect.any(String) });
    const headers = messageHeaders(t.rfc822);
    expect(headers['message-id']).toMatch(new RegExp(`^<svc_mailer_${refId}\\.`));
    expect(headers.subject).toBe('Spring sale');
    expect(headers.to).toContain('ann@example.com');
    expect(headers.cc).toContain('bob@example.com');
    expect(headers.bcc).toBeUndefined();
    expect(t.rfc822.toString('utf8')).not.toContain('cat@example.com');
    // Accepted, not yet delivered: that comes from SparkPost's callback.
    await eventually(
      async () =>
        (await logsOf(refId)).every((l) => l.status === 'QUEUED') && (await logsOf(refId)).length === 3,
      'three QUEUED log rows',
    );
    expect(sparkpost.transmissions.filter((x) => x.metadata?.ref_id === refId)).toHaveLength(1);
    first = sentOf(t);
  });

  it('3. turns SparkPost callbacks into the spec’s events, logs, suppressions and stats', async () => {
    // Further sends, one recipient each, for the other event types.
    for (const [name, email] of [
      ['spam', 'Dan@Example.com'],
      ['unsub', 'eve@example.com'],
      ['policy', 'fay@example.com'],
      ['genFail', 'gus@example.com'],
      ['genReject', 'hal@example.com'],
    ] as const)
      later[name] = sentOf(await transmissionOf(await send({ to: [{ email }] })));

    deliveryBatch = [
      sample('injection', first, 'ann@example.com'),
      sample('delivery', first, 'ann@example.com'),
      sample('bounce', first, 'bob@example.com', {
        bounce_class: '10',
        error_code: '550',
        num_retries: '0',
        raw_reason: '550 5.1.1 <bob@example.com>: Recipient address rejected: User unknown',
        reason: '550 5.1.1 <bob@...>: Recipient address rejected: User unknown',
      }),
      sample('bounce', first, 'cat@example.com', {
        bounce_class: '51',
        error_code: '554',
        num_retries: '3',
        raw_reason: '554 5.7.1 Service unavailable; client host blocked',
        reason: '554 5.7.1 Service unavailable; client host blocked',
      }),
    ];
    const res = await postAsMailer(deliveryBatch);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ success: true, message: '4 events received' });
    // A second batch, as SparkPost sends them: later events of the further sends.
    const res2 = await postAsMailer([
      sample('delivery', later.spam!, 'Dan@Example.com'),
      sample('spam_complaint', later.spam!, 'Dan@Example.com'),
      sample('delivery', later.unsub!, 'eve@example.com'),
      sample('link_unsubscribe', later.unsub!, 'eve@example.com'),
      sample('policy_rejection', later.policy!, 'fay@example.com'),
      sample('generation_failure', later.genFail!, 'gus@example.com'),
      // Our ref_id/copy_id in `metadata` only, the sample's own recipient metadata in rcpt_meta.
      sample('generation_rejection', later.genReject!, 'hal@example.com', {
        rcpt_meta: { customKey: 'customValue' },
        metadata: { ref_id: later.genReject!.refId, copy_id: later.genReject!.copyId },
      }),
    ]);
    expect(res2.status).toBe(200);

    // The webhook: the spec's events, SparkPost's message_id, error_code/num_retries verbatim.
    const deliveredEvent = await hookEvent(first.refId, 'MAIL_DELIVERED', 'ann@example.com');
    const ann = deliveryBatch[1] as { msys: { message_event: { message_id: string } } };
    expect(deliveredEvent).toMatchObject({
      success: true,
      details: {
        mailer_id: mailer.mailer_id,
        email: ['ann@example.com'],
        message_id: ann.msys.message_event.message_id,
      },
    });
    const hard = await hookEvent(first.refId, 'MAIL_BOUNCE', 'bob@example.com');
    expect(hard).toMatchObject({ success: false, details: { error_code: '550', num_retries: '0' } });
    const block = await hookEvent(first.refId, 'MAIL_BOUNCE', 'cat@example.com');
    expect(block).toMatchObject({ success: false, details: { error_code: '554', num_retries: '3' } });
    await hookEvent(later.spam!.refId, 'MAIL_DELIVERED', 'dan@example.com');
    await hookEvent(later.spam!.refId, 'MAIL_SPAM', 'dan@example.com');
    await hookEvent(later.unsub!.refId, 'MAIL_DELIVERED', 'eve@example.com');
    await hookEvent(later.unsub!.refId, 'MAIL_UNSUBSCRIBED', 'eve@example.com');
    const policy = await hookEvent(later.policy!.refId, 'MAIL_POLICY_REJECTION', 'fay@example.com');
    expect(policy.success).toBe(false);
    await hookEvent(later.genFail!.refId, 'MAIL_GENERATION_FAILURE', 'gus@example.com');
    await hookEvent(later.genReject!.refId, 'MAIL_GENERATION_REJECTION', 'hal@example.com');
    for (const e of delivered()) expect(e.details.webhook_id).toMatch(/^email_events_/);
    // Signed as docs/webhooks.md "Signatures" says, checked here by the documented formula.
    for (const r of hooks.to('/events')) {
      const key = Buffer.from(signingSecret.slice('whsec_'.length), 'base64');
      const signed = `${r.headers['webhook-id']}.${r.headers['webhook-timestamp']}.${r.body}`;
      expect(r.headers['webhook-signature']).toBe(
        `v1,${createHmac('sha256', key).update(signed).digest('base64')}`,
      );
    }

    // The logs show the statuses.
    expect((await logsOf(first.refId)).map((l) => [l.recipient, l.status])).toEqual([
      ['ann@example.com', 'MAIL_DELIVERED'],
      ['bob@example.com', 'MAIL_BOUNCE'],
      ['cat@example.com', 'MAIL_BOUNCE'],
    ]);
    expect((await logsOf(first.refId))[0]!.message_id).toBe(ann.msys.message_event.message_id);
    expect((await logsOf(later.spam!.refId))[0]).toMatchObject({
      status: 'MAIL_DELIVERED',
      last_event: 'MAIL_SPAM',
    });
    expect((await logsOf(later.unsub!.refId))[0]!.status).toBe('MAIL_UNSUBSCRIBED');
    for (const [s, event] of [
      [later.policy!, 'MAIL_POLICY_REJECTION'],
      [later.genFail!, 'MAIL_GENERATION_FAILURE'],
      [later.genReject!, 'MAIL_GENERATION_REJECTION'],
    ] as const)
      expect((await logsOf(s.refId))[0]).toMatchObject({ status: 'FAILED', last_event: event });

    // The suppression list: hard bounce, complaint and unsubscribe with their send; never the block.
    const list = await ok(tenant, 'GET', '/v1/suppressions?pageSize=50');
    const entries = (list.data as Array<{ email: string; reason: string; ref_id: string | null }>)
      .map(({ email, reason, ref_id }) => ({ email, reason, ref_id }))
      .sort((x, y) => x.email.localeCompare(y.email));
    expect(entries).toEqual([
      { email: 'bob@example.com', reason: 'hard_bounce', ref_id: first.refId },
      { email: 'dan@example.com', reason: 'spam_complaint', ref_id: later.spam!.refId },
      { email: 'eve@example.com', reason: 'unsubscribe', ref_id: later.unsub!.refId },
    ]);
    expect((await call(tenant, 'GET', '/v1/suppressions/cat%40example.com')).status).toBe(404);

    // GET /v1/stats counts them (today, UTC: the provider's times are a minute ago).
    const today = new Date().toISOString().slice(0, 10);
    const stats = await ok(tenant, 'GET', `/v1/stats?startDate=${today}&endDate=${today}`);
    expect(stats.totals).toMatchObject({
      requested: 8,
      delivered: 3,
      bounced: 2,
      spam: 1,
      unsubscribed: 1,
      rejected: 3,
      failed: 0,
    });
  });

  it('4. emits nothing twice when the same batch is posted again', async () => {
    await batchesDrained();
    const duplicates = await callbackMetric('duplicate');
    const before = delivered().length;
    expect((await postAsMailer(deliveryBatch)).status).toBe(200);
    await batchesDrained();
    // The injection is ignored (not stored as seen); the three mapped events are duplicates.
    await eventually(async () => (await callbackMetric('duplicate')) === duplicates + 3, 'three duplicates');
    // A later event of this send goes out after anything the repeat could have queued.
    const marker = sentOf(await transmissionOf(await send({ to: [{ email: 'ivy@example.com' }] })));
    expect((await postAsMailer([sample('delivery', marker, 'ivy@example.com')])).status).toBe(200);
    await hookEvent(marker.refId, 'MAIL_DELIVERED', 'ivy@example.com');
    expect(delivered().length).toBe(before + 1);
    expect(
      hookEventsOf(first.refId)
        .map((e) => `${e.event} ${e.details.email.join(',')}`)
        .sort(),
    ).toEqual([
      'MAIL_BOUNCE bob@example.com',
      'MAIL_BOUNCE cat@example.com',
      'MAIL_DELIVERED ann@example.com',
    ]);
  });

  it('5. refuses wrong, missing and another tenant’s credentials with 401', async () => {
    const ping = [{ msys: {} }];
    const { username, password } = mailer.callback;
    expect((await postAsMailer(ping)).status).toBe(200);
    expect((await postCallback(mailer.callback.url, ping, basic(username, `${password}x`))).status).toBe(401);
    expect((await postCallback(mailer.callback.url, ping)).status).toBe(401);
    const foreign = await createMailer(other, sparkpost.newKey());
    const foreignAuth = basic(foreign.callback.username, foreign.callback.password);
    // Valid on its own URL, refused on this mailer's.
    expect((await postCallback(foreign.callback.url, ping, foreignAuth)).status).toBe(200);
    const refused = await postCallback(mailer.callback.url, deliveryBatch, foreignAuth);
    expect(refused.status).toBe(401);
    expect(refused.authenticate).toMatch(/^Basic /);
    expect(JSON.parse(refused.body)).toEqual({
      success: false,
      error: 'Invalid or missing callback credentials',
    });
  });

  it('6a. retries a 503 from SparkPost and is accepted', async () => {
    sparkpost.fail({
      status: 503,
      body: sparkpost.error('Service Unavailable'),
      match: (r) => r.body.toString('utf8').includes('Flash sale'),
    });
    const refId = await send({ to: [{ email: 'jon@example.com' }], subject: 'Flash sale' });
    await transmissionOf(refId);
    expect(requestsOf(refId)).toHaveLength(2);
    const retried = await hookEvent(refId, 'SMTP_ERROR', 'jon@example.com');
    expect(retried.details).toMatchObject({ retry_scheduled: true });
    await eventually(async () => (await logsOf(refId))[0]?.status === 'QUEUED', 'the copy accepted');
  });

  it('6b. deactivates the mailer when SparkPost refuses its key', async () => {
    sparkpost.revoke(apiKey);
    const refId = await send({ to: [{ email: 'kim@example.com' }], subject: 'After the key was deleted' });
    const deactivated = await eventually(
      () =>
        delivered().find(
          (e) =>
            (e as { event: string }).event === 'MAILER_DEACTIVATED' &&
            (e.details as { mailer_id?: string }).mailer_id === mailer.mailer_id,
        ),
      'MAILER_DEACTIVATED at the webhook',
    );
    expect(deactivated).toMatchObject({
      success: false,
      details: {
        mailer_id: mailer.mailer_id,
        config_type: 'sparkpost',
        failed_reason: 'provider_auth_error',
      },
    });
    const failed = await hookEvent(refId, 'SMTP_ERROR', 'kim@example.com');
    expect(failed.details).toMatchObject({ retry_scheduled: false });
    const got = await ok(tenant, 'GET', `/v1/mailer/${mailer.mailer_id}`);
    expect(got.data).toMatchObject({ state: 'deactivated', state_reason: 'provider_auth_error' });
    expect(sparkpost.transmissions.filter((t) => t.metadata?.ref_id === refId)).toHaveLength(0);
  });
});
