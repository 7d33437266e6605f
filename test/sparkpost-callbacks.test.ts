/**
 * SparkPost's event webhook on the real tracking service, PostgreSQL, RabbitMQ and the webhook
 * dispatcher (docs/providers.md "SparkPost callbacks"): batches built from SparkPost's documented
 * sample payloads (libs/providers sparkpost/events samples.ts), posted over HTTP with the mailer's
 * Basic credentials, matched to copies accepted through the gateway's own statement
 * (testkit acceptSend), and followed to the events, log rows, suppressions and the tenant's
 * EMAIL_EVENT webhook. Also: credentials (missing, wrong, another tenant's mailer, unknown or
 * deleted mailer), body limits and shapes, the test ping, a batch delivered twice, unknown sends
 * (metric), the provider's time as event_at, and a batch stored before a restart.
 */
import { request as httpRequest } from 'node:http';
import type { EmailEvent } from '@mailyard/contracts';
import { buildGatewayApp } from '@mailyard/gateway';
import {
  type RunningService,
  type ServiceContext,
  closeContext,
  configFrom,
  createLogger,
  metricsRegistry,
  openContext,
} from '@mailyard/platform';
import { createTenant, providerCallbacks } from '@mailyard/store';
import { acceptSend, logsOf, setMailerState } from '@mailyard/testkit/fixtures';
import { type WebhookReceiver, startWebhookReceiver } from '@mailyard/testkit/peers/webhook-receiver';
import { freePort } from '@mailyard/testkit/process';
import { type Stores, createStores } from '@mailyard/testkit/stores';
import { eventually } from '@mailyard/testkit/webhooks';
import { start as startTracking } from '@mailyard/tracking';
import { start as startDispatcher } from '@mailyard/webhook-dispatcher';
import request from 'supertest';
import { sparkPostSample } from '../libs/providers/src/sparkpost/events/samples';
import { type SparkPostMailerFixture, insertSparkPostMailer } from './support/sparkpost-mailer';

jest.setTimeout(120_000);

let stores: Stores;
let ctx: ServiceContext;
let tracking: RunningService | null = null;
let dispatcher: RunningService;
let hooks: WebhookReceiver;
let base = '';
let tenantA = '';
let tenantB = '';
let mailerA: SparkPostMailerFixture;
let mailerB: SparkPostMailerFixture;
let eventSeq = 0;

/** A recent provider time, whole seconds (SparkPost sends unix seconds). */
const T = Math.floor(Date.now() / 1000) - 120;
const stampOf = (unix: number) => `${new Date(unix * 1000).toISOString().slice(0, 19)}.000000Z`;

beforeAll(async () => {
  stores = await createStores();
  hooks = await startWebhookReceiver();
  const port = await freePort();
  ctx = await openContext(
    configFrom({
      ...stores.env,
      LOG_LEVEL: 'error',
      OUTBOX_POLL_MS: '50',
      API_KEY_CACHE_MS: '0',
      HOST: '127.0.0.1',
      TRACKING_PORT: String(port),
      TRACKING_BASE_URL: '',
      TRACKING_CALLBACK_POLL_MS: '200',
      WEBHOOK_ALLOW_INSECURE: '1',
      WEBHOOK_POLL_MS: '100',
    }),
    createLogger('sparkpost-callbacks-test', 'error'),
  );
  tracking = await startTracking(ctx);
  dispatcher = await startDispatcher(ctx);
  base = `http://127.0.0.1:${port}`;
  const a = await createTenant(ctx.db, { name: 'sp-a', tier: 'enterprise' });
  const b = await createTenant(ctx.db, { name: 'sp-b', tier: 'enterprise' });
  tenantA = a.id;
  tenantB = b.id;
  mailerA = await insertSparkPostMailer(ctx.db, ctx.sealer, tenantA);
  mailerB = await insertSparkPostMailer(ctx.db, ctx.sealer, tenantB);
  await request(buildGatewayApp(ctx))
    .post('/v1/webhook/register')
    .set({ Authorization: `Bearer ${a.apiKey}` })
    .send({
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
        },
      },
    })
    .expect(201);
});

afterAll(async () => {
  await tracking?.stop();
  await dispatcher?.stop();
  if (ctx) await closeContext(ctx);
  await hooks?.close();
  await stores?.drop();
});

const basic = (m: { username: string; password: string }) =>
  `Basic ${Buffer.from(`${m.username}:${m.password}`).toString('base64')}`;

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** POSTs `body` (string, or `size` bytes streamed in 1 MB chunks) to the tracking service. */
function post(
  path: string,
  headers: Record<string, string>,
  body: string | { size: number; declare: boolean },
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${base}${path}`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        ...(typeof body === 'string'
          ? { 'Content-Length': String(Buffer.byteLength(body)) }
          : body.declare
            ? { 'Content-Length': String(body.size) }
            : {}),
        ...headers,
      },
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks).toString(),
        });
        req.destroy();
      });
    });
    req.on('error', (err) => (answered ? undefined : reject(err)));
    let answered = false;
    req.on('response', () => {
      answered = true;
    });
    if (typeof body === 'string') {
      req.end(body);
      return;
    }
    const chunk = Buffer.alloc(1024 * 1024, 0x20);
    let sent = 0;
    const pump = () => {
      while (!answered && sent < body.size) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      if (!answered) req.end();
    };
    pump();
  });
}

const callbackPath = (mailerId: string) => `/callbacks/sparkpost/${mailerId}`;
const postBatch = (batch: unknown, m: SparkPostMailerFixture = mailerA, mailerId = m.id) =>
  post(callbackPath(mailerId), { Authorization: basic(m) }, JSON.stringify(batch));

/** One accepted send of tenant `tenantId` through its SparkPost mailer; its copy and recipients. */
async function newSend(tenantId: string, mailerId: string, to: string[]) {
  const accepted = await acceptSend(ctx.db, tenantId, {
    from: { email: 'news@brand.test' },
    to: to.map((email) => ({ email })),
    subject: 'Spring sale',
    content: [{ type: 'text/plain', value: 'Everything is 20% off' }],
    mailer_id: mailerId,
    custom_args: { campaign: 'spring' },
  });
  return { refId: accepted.refId, copyId: accepted.copyIds[0]! };
}

/** A SparkPost sample of `type` about `to` of a send of ours, with a fresh event id. */
function sample(
  type: string,
  send: { refId: string; copyId: string },
  to: string,
  o: Record<string, unknown> = {},
) {
  eventSeq += 1;
  return sparkPostSample(type, {
    event_id: `${9_000_000_000 + eventSeq}`,
    timestamp: String(T),
    rcpt_to: to,
    raw_rcpt_to: to,
    rcpt_meta: { ref_id: send.refId, copy_id: send.copyId },
    ...o,
  });
}

interface EventRow {
  event: string;
  event_at: Date;
  payload: EmailEvent;
}
const eventsOf = async (refId: string) =>
  (
    await ctx.db.query<EventRow>(
      'SELECT event, event_at, payload FROM email_events WHERE ref_id = $1 ORDER BY event_at, id',
      [refId],
    )
  ).rows;
const suppression = async (tenantId: string, email: string) =>
  (
    await ctx.db.query<{ reason: string }>(
      'SELECT reason FROM suppressions WHERE tenant_id = $1 AND email = $2',
      [tenantId, email],
    )
  ).rows[0]?.reason ?? null;
const processed = () =>
  eventually(async () => (await providerCallbacks.pending(ctx.db)) === 0 || undefined, 'batches processed');
const metric = async (outcome: string) => {
  const m = await metricsRegistry.getSingleMetric('mailyard_provider_callback_events_total')?.get();
  return m?.values.find((v) => v.labels.outcome === outcome && v.labels.provider === 'sparkpost')?.value ?? 0;
};
const posted = (refId: string) =>
  hooks
    .deliveries('/events')
    .flatMap((r) => r.json as EmailEvent[])
    .filter((e) => e.details.ref_id === refId);
const storedBatches = async () =>
  Number(
    (await ctx.db.query<{ n: string }>('SELECT count(*) AS n FROM provider_callback_batches')).rows[0]!.n,
  );

describe('authentication', () => {
  const ping = JSON.stringify([{ msys: {} }]);

  it('answers the test ping with 200 and stores nothing', async () => {
    const before = await storedBatches();
    const res = await post(callbackPath(mailerA.id), { Authorization: basic(mailerA) }, ping);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toMatchObject({ success: true });
    expect(await storedBatches()).toBe(before);
  });

  it.each([
    ['no credentials', () => ({})],
    ['a wrong password', () => ({ Authorization: basic({ ...mailerA, password: `${mailerA.password}x` }) })],
    ['a wrong username', () => ({ Authorization: basic({ ...mailerA, username: mailerB.username }) })],
    ["another tenant's mailer credentials", () => ({ Authorization: basic(mailerB) })],
    ['a Bearer API key', () => ({ Authorization: `Bearer ${mailerA.password}` })],
  ])('refuses %s with 401 and a Basic challenge', async (_what, headers) => {
    const res = await post(callbackPath(mailerA.id), headers(), ping);
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toMatch(/^Basic /);
    expect(JSON.parse(res.body)).toEqual({
      success: false,
      error: 'Invalid or missing callback credentials',
    });
  });

  it('answers an unknown or deleted mailer exactly like wrong credentials', async () => {
    const unknown = await post(
      callbackPath('sparkpost_01JZZZZZZZZZZZZZZZZZZZZZZZ'),
      { Authorization: basic(mailerA) },
      ping,
    );
    expect(unknown.status).toBe(401);
    const gone = await insertSparkPostMailer(ctx.db, ctx.sealer, tenantA);
    expect((await post(callbackPath(gone.id), { Authorization: basic(gone) }, ping)).status).toBe(200);
    await setMailerState(ctx.db, gone.id, 'deleted');
    const deleted = await post(callbackPath(gone.id), { Authorization: basic(gone) }, ping);
    expect(deleted.status).toBe(401);
    expect(deleted.body).toBe(unknown.body);
  });
});

describe('bodies', () => {
  it.each([
    ['malformed JSON', '[{"msys": {', 'Malformed JSON body'],
    ['an object instead of an array', '{"msys": {}}', 'Invalid SparkPost event batch'],
    ['an entry without msys', '[{"foo": 1}]', 'Invalid SparkPost event batch'],
    ['an event that is not an object', '[{"msys": {"message_event": 42}}]', 'Invalid SparkPost event batch'],
    ['an empty body', '', 'Invalid SparkPost event batch'],
  ])('answers %s with a 400 envelope', async (_what, body, error) => {
    const res = await post(callbackPath(mailerA.id), { Authorization: basic(mailerA) }, body);
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body)).toMatchObject({ success: false, error });
  });

  it.each([true, false])('answers a 50 MB body with 413 (Content-Length declared: %s)', async (declare) => {
    const res = await post(
      callbackPath(mailerA.id),
      { Authorization: basic(mailerA) },
      { size: 50 * 1024 * 1024, declare },
    );
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body)).toEqual({ success: false, error: 'Request body too large' });
  });

  it('answers a 50 MB body without credentials with 401', async () => {
    const res = await post(callbackPath(mailerA.id), {}, { size: 50 * 1024 * 1024, declare: true });
    expect(res.status).toBe(401);
  });

  it('still serves after all of that', async () => {
    const res = await fetch(`${base}/healthz`);
    expect(res.status).toBe(200);
  });
});

describe('events', () => {
  it('turns every mapped SparkPost type into its event, suppresses by the rules, ignores the rest', async () => {
    const sends = {
      delivery: await newSend(tenantA, mailerA.id, ['ada@example.com']),
      hard: await newSend(tenantA, mailerA.id, ['gone@example.com']),
      block: await newSend(tenantA, mailerA.id, ['blocked@example.com']),
      oob: await newSend(tenantA, mailerA.id, ['late@example.com']),
      spam: await newSend(tenantA, mailerA.id, ['angry@example.com']),
      policy: await newSend(tenantA, mailerA.id, ['policy@example.com']),
      genFail: await newSend(tenantA, mailerA.id, ['template@example.com']),
      genReject: await newSend(tenantA, mailerA.id, ['listed@example.com']),
      listUnsub: await newSend(tenantA, mailerA.id, ['list@example.com']),
      linkUnsub: await newSend(tenantA, mailerA.id, ['link@example.com']),
    };
    const d = sends.delivery;
    const batch = [
      sample('injection', d, 'ada@example.com'),
      sample('delay', d, 'ada@example.com'),
      sample('delivery', d, 'ada@example.com'),
      sample('open', d, 'ada@example.com'),
      sample('initial_open', d, 'ada@example.com'),
      sample('click', d, 'ada@example.com'),
      sample('amp_open', d, 'ada@example.com'),
      sample('relay_injection', d, 'ada@example.com'),
      sample('bounce', sends.hard, 'gone@example.com', {
        bounce_class: '10',
        error_code: '550',
        num_retries: '0',
      }),
      sample('bounce', sends.block, 'blocked@example.com', {
        bounce_class: '51',
        error_code: '554',
        num_retries: '3',
      }),
      sample('out_of_band', sends.oob, 'late@example.com', { bounce_class: '30' }),
      sample('spam_complaint', sends.spam, 'angry@example.com'),
      sample('policy_rejection', sends.policy, 'policy@example.com'),
      sample('generation_failure', sends.genFail, 'template@example.com'),
      sample('generation_rejection', sends.genReject, 'listed@example.com'),
      sample('list_unsubscribe', sends.listUnsub, 'list@example.com'),
      sample('link_unsubscribe', sends.linkUnsub, 'link@example.com'),
    ];
    const ignoredBefore = await metric('ignored');
    const res = await postBatch(batch);
    expect(res.status).toBe(200);
    await processed();
    expect(await metric('ignored')).toBe(ignoredBefore + 7);

    const only = async (refId: string) => {
      const rows = await eventsOf(refId);
      expect(rows).toHaveLength(1);
      return rows[0]!;
    };
    const delivered = await only(d.refId);
    expect(delivered.payload).toMatchObject({
      event: 'MAIL_DELIVERED',
      success: true,
      details: {
        ref_id: d.refId,
        mailer_id: mailerA.id,
        email: ['ada@example.com'],
        custom_args: { campaign: 'spring' },
        message_id: '000443ee14578172be22',
        event_at: stampOf(T),
        failed_reason: '',
      },
    });
    expect(delivered.payload.details.error_code).toBeUndefined();
    expect((await logsOf(ctx.db, d.refId))[0]).toMatchObject({
      status: 'MAIL_DELIVERED',
      message_id: '000443ee14578172be22',
    });

    const hard = await only(sends.hard.refId);
    expect(hard.payload).toMatchObject({
      event: 'MAIL_BOUNCE',
      success: false,
      details: {
        error_code: '550',
        num_retries: '0',
        provider_error: '554 5.5.0 Recipient address rejected',
        failed_reason: 'Invalid Recipient (bounce class 10): 000 Example Remote MTA Bounce Message',
        event_at: stampOf(T),
        bounce_category: 'invalid_recipient',
      },
    });
    expect(await suppression(tenantA, 'gone@example.com')).toBe('hard_bounce');
    const block = await only(sends.block.refId);
    expect(block.payload.details).toMatchObject({
      error_code: '554',
      num_retries: '3',
      bounce_category: 'reputation',
    });
    expect(await suppression(tenantA, 'blocked@example.com')).toBeNull();
    expect((await only(sends.oob.refId)).payload).toMatchObject({
      event: 'MAIL_BOUNCE',
      details: { bounce_category: 'invalid_recipient' },
    });
    expect(await suppression(tenantA, 'late@example.com')).toBe('hard_bounce');

    expect((await only(sends.spam.refId)).payload).toMatchObject({
      event: 'MAIL_SPAM',
      details: { failed_reason: 'Spam complaint (abuse)' },
    });
    expect(await suppression(tenantA, 'angry@example.com')).toBe('spam_complaint');

    const policy = await only(sends.policy.refId);
    expect(policy.payload).toMatchObject({
      event: 'MAIL_POLICY_REJECTION',
      details: {
        failed_reason: '550 5.7.1 [internal] Forbidden',
        provider_error: '550 5.7.1 Unsubscribed recipient',
      },
    });
    expect(policy.payload.details.error_code).toBeUndefined();
    expect(await suppression(tenantA, 'policy@example.com')).toBeNull();
    expect((await only(sends.genFail.refId)).payload.event).toBe('MAIL_GENERATION_FAILURE');
    expect((await only(sends.genReject.refId)).payload.event).toBe('MAIL_GENERATION_REJECTION');
    expect(await suppression(tenantA, 'listed@example.com')).toBeNull();
    for (const [send, email] of [
      [sends.listUnsub, 'list@example.com'],
      [sends.linkUnsub, 'link@example.com'],
    ] as const) {
      expect((await only(send.refId)).payload).toMatchObject({ event: 'MAIL_UNSUBSCRIBED', success: true });
      expect(await suppression(tenantA, email)).toBe('unsubscribe');
      // The suppression names the send it came from (migration 0032).
      const { rows } = await ctx.db.query<{ ref_id: string | null }>(
        'SELECT ref_id FROM suppressions WHERE tenant_id = $1 AND email = $2',
        [tenantA, email],
      );
      expect(rows[0]?.ref_id).toBe(send.refId);
    }

    // The tenant's EMAIL_EVENT webhook gets them, error_code and num_retries verbatim.
    const hook = await eventually(
      () => posted(sends.hard.refId).find((e) => e.event === 'MAIL_BOUNCE'),
      'bounce webhook',
      30_000,
    );
    expect(hook.details).toMatchObject({ error_code: '550', num_retries: '0', event_at: stampOf(T) });
    for (const [send, event] of [
      [d, 'MAIL_DELIVERED'],
      [sends.policy, 'MAIL_POLICY_REJECTION'],
      [sends.genFail, 'MAIL_GENERATION_FAILURE'],
      [sends.genReject, 'MAIL_GENERATION_REJECTION'],
      [sends.spam, 'MAIL_SPAM'],
      [sends.listUnsub, 'MAIL_UNSUBSCRIBED'],
    ] as const)
      await eventually(() => posted(send.refId).find((e) => e.event === event), `${event} webhook`, 30_000);
  });

  it('emits nothing twice when SparkPost delivers a batch again', async () => {
    const send = await newSend(tenantA, mailerA.id, ['twice@example.com']);
    const batch = [
      sample('delivery', send, 'twice@example.com'),
      sample('bounce', send, 'twice@example.com', { bounce_class: '10', timestamp: String(T + 60) }),
    ];
    expect((await postBatch(batch)).status).toBe(200);
    await processed();
    await eventually(() => (posted(send.refId).length === 2 ? true : undefined), 'both webhooks', 30_000);
    const duplicatesBefore = await metric('duplicate');
    expect((await postBatch(batch)).status).toBe(200);
    await processed();
    expect(await metric('duplicate')).toBe(duplicatesBefore + 2);
    expect((await eventsOf(send.refId)).map((e) => e.event)).toEqual(['MAIL_DELIVERED', 'MAIL_BOUNCE']);
    // A later batch for the same send goes out, so anything the repeat had queued would be before it.
    const marker = await newSend(tenantA, mailerA.id, ['marker@example.com']);
    expect((await postBatch([sample('delivery', marker, 'marker@example.com')])).status).toBe(200);
    await eventually(() => posted(marker.refId)[0], 'marker webhook', 30_000);
    expect(
      posted(send.refId)
        .map((e) => e.event)
        .sort(),
    ).toEqual(['MAIL_BOUNCE', 'MAIL_DELIVERED']);
  });

  it('counts unknown sends and drops them: unknown ref_id, another tenant, no metadata', async () => {
    const other = await newSend(tenantB, mailerB.id, ['b@example.com']);
    const mine = await newSend(tenantA, mailerA.id, ['mine@example.com']);
    const before = await metric('unknown_send');
    const batch = [
      sample(
        'delivery',
        { refId: '01JUNKNOWNREF0000000000000', copyId: '01JUNKNOWNREF0000000000000.1' },
        'x@example.com',
      ),
      sample('bounce', other, 'b@example.com', { bounce_class: '10' }),
      sample('delivery', mine, 'someone-else@example.com'),
      sparkPostSample('delivery', { event_id: `${8_000_000_000 + ++eventSeq}` }),
    ];
    expect((await postBatch(batch)).status).toBe(200);
    await processed();
    expect(await metric('unknown_send')).toBe(before + 4);
    expect(await eventsOf(other.refId)).toEqual([]);
    expect(await eventsOf(mine.refId)).toEqual([]);
    expect(await suppression(tenantB, 'b@example.com')).toBeNull();
  });

  it('keeps event_at unique for recipients of one copy reported in the same second', async () => {
    const send = await newSend(tenantA, mailerA.id, ['one@example.com', 'two@example.com']);
    expect(
      (
        await postBatch([
          sample('delivery', send, 'one@example.com'),
          sample('delivery', send, 'two@example.com'),
        ])
      ).status,
    ).toBe(200);
    await processed();
    const rows = await eventsOf(send.refId);
    expect(rows.map((r) => r.payload.details.email[0])).toEqual(['one@example.com', 'two@example.com']);
    expect(rows.map((r) => r.payload.details.event_at)).toEqual([
      stampOf(T),
      stampOf(T).replace('000000Z', '000001Z'),
    ]);
  });

  it('records a final event once: a policy rejection after the delivery changes nothing', async () => {
    const send = await newSend(tenantA, mailerA.id, ['final@example.com']);
    expect(
      (
        await postBatch([
          sample('delivery', send, 'final@example.com'),
          sample('policy_rejection', send, 'final@example.com'),
        ])
      ).status,
    ).toBe(200);
    await processed();
    expect((await eventsOf(send.refId)).map((e) => e.event)).toEqual(['MAIL_DELIVERED']);
    expect((await logsOf(ctx.db, send.refId))[0]!.status).toBe('MAIL_DELIVERED');
  });
});

describe('durability', () => {
  it('processes a batch stored before a restart', async () => {
    const send = await newSend(tenantA, mailerA.id, ['restart@example.com']);
    await tracking!.stop();
    tracking = null;
    await providerCallbacks.store(ctx.db, {
      tenantId: tenantA,
      mailerId: mailerA.id,
      provider: 'sparkpost',
      body: JSON.stringify([sample('delivery', send, 'restart@example.com')]),
    });
    expect(await eventsOf(send.refId)).toEqual([]);
    tracking = await startTracking(ctx);
    await processed();
    expect((await eventsOf(send.refId)).map((e) => e.event)).toEqual(['MAIL_DELIVERED']);
  });
});
