/**
 * The webhook dispatcher on the real servers (PostgreSQL, RabbitMQ): webhooks registered through
 * the gateway API, events published on the bus as their producers publish them (the store's
 * outbox for MAILER_DEACTIVATED), delivered to a real HTTP receiver on 127.0.0.1
 * (WEBHOOK_ALLOW_INSECURE=1 here; the guard without it is tested at the end).
 */
import {
  EMAIL_EVENT_MESSAGE,
  type EmailEvent,
  Exchange,
  IMAP_CAPABLE_CONFIG_TYPES,
  IdPrefix,
  Queue,
  RoutingKey,
  newId,
} from '@mailyard/contracts';
import { buildGatewayApp } from '@mailyard/gateway';
import {
  type OutboxRelay,
  type RunningService,
  type ServiceContext,
  closeContext,
  configFrom,
  createLogger,
  envelope,
  openContext,
  startOutboxRelay,
  traceIdOf,
} from '@mailyard/platform';
import { createTenant, deactivateMailer, mailers, webhooks } from '@mailyard/store';
import { type WebhookReceiver, startWebhookReceiver } from '@mailyard/testkit/peers/webhook-receiver';
import { type SharedStores, createSharedStores } from '@mailyard/testkit/stores';
import {
  at,
  emailEvent,
  eventsFlushed,
  eventually,
  publishDomainVerification,
  publishEmailEvent,
  publishEmailEventGroup,
} from '@mailyard/testkit/webhooks';
import { start as startDispatcher } from '@mailyard/webhook-dispatcher';
import { Webhook } from 'standardwebhooks';
import request from 'supertest';

jest.setTimeout(90_000);

let stores: SharedStores;
let receiver: WebhookReceiver;
let ctx: ServiceContext;
let dispatcher: RunningService;
let relay: OutboxRelay;
let app: ReturnType<typeof buildGatewayApp>;

beforeAll(async () => {
  stores = await createSharedStores('servers');
  receiver = await startWebhookReceiver();
  const config = configFrom({
    ...stores.env,
    LOG_LEVEL: 'error',
    API_KEY_CACHE_MS: '0',
    OUTBOX_POLL_MS: '50',
    WEBHOOK_ALLOW_INSECURE: '1',
    WEBHOOK_BATCH_MAX: '5',
    // The window must hold the four events the first test publishes one after another, and an
    // attempt must not time out while a loaded 2-core CI machine is slow to answer (a timed-out
    // attempt is retried: one more request than the tests count). 300 ms and 1 s were too short.
    WEBHOOK_BATCH_WAIT_MS: '1000',
    WEBHOOK_RETRY_DELAYS: '0.2,0.2,0.2',
    WEBHOOK_POLL_MS: '100',
    WEBHOOK_TIMEOUT_MS: '5000',
  });
  ctx = await openContext(config, createLogger('webhooks-test', process.env.TEST_LOG_LEVEL ?? 'error'));
  dispatcher = await startDispatcher(ctx);
  relay = startOutboxRelay(ctx);
  app = buildGatewayApp(ctx);
});

afterAll(async () => {
  await relay?.stop();
  await dispatcher?.stop();
  if (ctx) await closeContext(ctx);
  await receiver?.close();
  await stores?.drop();
});

let seq = 0;
interface Account {
  tenantId: string;
  key: string;
  path: string;
  webhookId: string;
  secret: string;
}

/** A tenant with an EMAIL_EVENT webhook at its own receiver path. */
async function account(
  events: Record<string, boolean>,
  headers: Record<string, string> = {},
): Promise<Account> {
  const t = await createTenant(ctx.db, { name: `wh-${++seq}`, tier: 'enterprise' });
  const path = `/hook-${seq}`;
  const res = await request(app)
    .post('/v1/webhook/register')
    .set({ Authorization: `Bearer ${t.apiKey}` })
    .send({
      webhook_url: receiver.url(path),
      event: 'EMAIL_EVENT',
      method: 'POST',
      headers,
      webhook_options: { events },
    })
    .expect(201);
  return {
    tenantId: t.id,
    key: t.apiKey,
    path,
    webhookId: res.body.webhook_id,
    secret: res.body.signing_secret,
  };
}

const api = (a: Account) => ({
  get: (path: string) =>
    request(app)
      .get(path)
      .set({ Authorization: `Bearer ${a.key}` }),
  post: (path: string, body?: object) =>
    request(app)
      .post(path)
      .set({ Authorization: `Bearer ${a.key}` })
      .send(body ?? {}),
  put: (path: string, body: object) =>
    request(app)
      .put(path)
      .set({ Authorization: `Bearer ${a.key}` })
      .send(body),
});

/** A basic IMAP mailer of `a` whose incoming webhook is `<a.path>-mailer`, with `headers` stored as given. */
async function imapMailer(a: Account, headers: Record<string, string>): Promise<string> {
  const mailerId = newId(IdPrefix.basicImap);
  await mailers.create(ctx.db, a.tenantId, {
    id: mailerId,
    configType: 'basic_imap',
    connectionType: 'basic',
    name: 'imap',
    email: 'a@example.com',
    config: { host: 'imap.example.com', port: 993, username: 'u', secure: 'SSL' },
    sealedSecret: ctx.sealer.seal('pw'),
    webhook: {
      info: { url: receiver.url(`${a.path}-mailer`), method: 'POST', headers_present: Object.keys(headers) },
      sealedHeaders: ctx.sealer.seal(JSON.stringify(headers)),
    },
  });
  return mailerId;
}

const bodies = (path: string) => receiver.to(path).map((r) => r.json as EmailEvent[]);
const allEvents = (path: string) => bodies(path).flat();

it('batches an account’s subscribed events into one signed JSON array, oldest first, with custom headers and traceparent', async () => {
  const a = await account({ delivery: true, bounce: true }, { 'X-Receiver-Auth': 'token-123' });
  const trace = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
  await publishEmailEvent(ctx.bus, a.tenantId, emailEvent('MAIL_DELIVERED', at(3)), trace);
  await publishEmailEvent(ctx.bus, a.tenantId, emailEvent('MAIL_BOUNCE', at(1)), trace);
  await publishEmailEvent(ctx.bus, a.tenantId, emailEvent('MAIL_OPENED', at(2)), trace);
  await publishEmailEvent(ctx.bus, a.tenantId, emailEvent('MAIL_DELIVERED', at(0)), trace);

  await eventually(() => allEvents(a.path).length >= 3, 'three events delivered');
  const [req] = receiver.to(a.path);
  expect(receiver.to(a.path)).toHaveLength(1);
  const body = req!.json as EmailEvent[];
  expect(Array.isArray(body)).toBe(true);
  expect(body.map((e) => [e.event, e.details.event_at])).toEqual([
    ['MAIL_DELIVERED', at(0)],
    ['MAIL_BOUNCE', at(1)],
    ['MAIL_DELIVERED', at(3)],
  ]);
  expect(body.every((e) => e.details.webhook_id === a.webhookId)).toBe(true);
  expect(req!.method).toBe('POST');
  expect(req!.headers['content-type']).toBe('application/json');
  expect(req!.headers['x-receiver-auth']).toBe('token-123');
  expect(traceIdOf(String(req!.headers.traceparent))).toBe('0af7651916cd43dd8448eb211c80319c');
  // Standard Webhooks: an independent verifier accepts the signature with the secret shown at register.
  const verified = new Webhook(a.secret).verify(req!.body, {
    'webhook-id': String(req!.headers['webhook-id']),
    'webhook-timestamp': String(req!.headers['webhook-timestamp']),
    'webhook-signature': String(req!.headers['webhook-signature']),
  });
  expect(verified).toEqual(body);
  expect(() =>
    new Webhook(a.secret).verify(`${req!.body} `, {
      'webhook-id': String(req!.headers['webhook-id']),
      'webhook-timestamp': String(req!.headers['webhook-timestamp']),
      'webhook-signature': String(req!.headers['webhook-signature']),
    }),
  ).toThrow();
});

it('a single event is still an array; batches hold at most WEBHOOK_BATCH_MAX events; nothing is lost', async () => {
  const a = await account({ delivery: true });
  for (let i = 0; i < 12; i++)
    await publishEmailEvent(ctx.bus, a.tenantId, emailEvent('MAIL_DELIVERED', at(100 + i)));
  await eventually(() => allEvents(a.path).length >= 12, 'twelve events delivered');
  for (const b of bodies(a.path)) {
    expect(Array.isArray(b)).toBe(true);
    expect(b.length).toBeLessThanOrEqual(5);
  }
  expect(new Set(allEvents(a.path).map((e) => e.details.event_at)).size).toBe(12);

  const b = await account({ delivery: true });
  await publishEmailEvent(ctx.bus, b.tenantId, emailEvent('MAIL_DELIVERED', at(1)));
  await eventually(() => receiver.to(b.path).length === 1, 'one request');
  expect(bodies(b.path)[0]).toHaveLength(1);
});

it('takes a group message (email.event version 2) and the single-event shape alike: each event once, a group never split across statements', async () => {
  const a = await account({ delivery: true });
  const traces = Array.from(
    { length: 7 },
    (_, i) => `00-${(i + 1).toString(16).padStart(32, 'a')}-b7ad6b7169203331-01`,
  );
  const group = traces.map((_, i) => emailEvent('MAIL_DELIVERED', at(300 + i)));
  // Version 1 (a producer from before groups, during a rolling deploy) beside version 2.
  await publishEmailEvent(ctx.bus, a.tenantId, emailEvent('MAIL_DELIVERED', at(299)), traces[0]);
  await publishEmailEventGroup(ctx.bus, a.tenantId, group, traces);
  await eventually(() => allEvents(a.path).length >= 8, 'eight events delivered');
  // Each event exactly once; bodies hold at most WEBHOOK_BATCH_MAX (5), oldest first (two bodies
  // to one endpoint may be in flight at once: which arrives first is not promised).
  expect(
    allEvents(a.path)
      .map((e) => e.details.event_at)
      .sort(),
  ).toEqual(Array.from({ length: 8 }, (_, i) => at(299 + i)));
  for (const b of bodies(a.path)) {
    expect(b.length).toBeLessThanOrEqual(5);
    expect(b.map((e) => e.details.event_at)).toEqual(b.map((e) => e.details.event_at).sort());
  }
  // Every body continues the trace of its oldest event.
  for (const r of receiver.to(a.path)) {
    const first = (r.json as EmailEvent[])[0]!;
    const i = Math.max(
      0,
      group.findIndex((e) => e.details.event_at === first.details.event_at),
    );
    expect(traceIdOf(String(r.headers.traceparent))).toBe(traceIdOf(traces[i]!));
  }
  // The group's 7 events were stored by one statement: their deliveries share one created_at.
  const created = await ctx.db.query<{ n: number }>(
    `SELECT count(DISTINCT created_at)::int AS n FROM webhook_deliveries d,
            jsonb_array_elements(d.body::jsonb) AS e
      WHERE d.tenant_id = $1 AND e->'details'->>'event_at' = ANY($2::text[])`,
    [a.tenantId, group.map((e) => e.details.event_at)],
  );
  expect(created.rows[0]!.n).toBe(1);
});

it('parks an email.event message of an unknown version or with a mixed group, never acknowledges it away', async () => {
  const a = await account({ delivery: true });
  const bad = {
    events: [{ event: emailEvent('MAIL_DELIVERED', at(1)) }, { event: emailEvent('MAIL_BOUNCE', at(2)) }],
  };
  await ctx.bus.publish(
    Exchange.events,
    RoutingKey.emailEvent('MAIL_DELIVERED'),
    envelope(EMAIL_EVENT_MESSAGE, bad, { version: 2, tenantId: a.tenantId }),
  );
  await ctx.bus.publish(
    Exchange.events,
    RoutingKey.emailEvent('MAIL_DELIVERED'),
    envelope(EMAIL_EVENT_MESSAGE, emailEvent('MAIL_DELIVERED', at(3)), { version: 3, tenantId: a.tenantId }),
  );
  const parked: string[] = [];
  await eventually(async () => {
    const got = await ctx.bus.parked(Queue.webhookDispatcher, true);
    parked.push(...got.filter((p) => p.envelope.tenant_id === a.tenantId).map((p) => p.reason));
    return parked.length >= 2;
  }, 'both parked');
  expect(parked.sort()).toEqual([
    expect.stringMatching(/version 2 payload: .*every event of a group must be MAIL_DELIVERED/s),
    expect.stringMatching(/version 3 payload: unknown version 3/),
  ]);
  expect(receiver.to(a.path)).toHaveLength(0);
});

it('filters by the subscription toggles; imap_error never applies; SMTP-only MAILER_DEACTIVATED bypasses them', async () => {
  const a = await account({ smtp_error: true, imap_error: true });
  const before = await eventsFlushed();
  await publishEmailEvent(ctx.bus, a.tenantId, emailEvent('MAIL_DELIVERED', at(1)));
  await publishEmailEvent(ctx.bus, a.tenantId, emailEvent('MAIL_OPENED', at(2)));
  await eventually(async () => (await eventsFlushed()) >= before + 2, 'events routed');
  // A basic SMTP mailer deactivated by the store (outbox -> bus, its real routing key).
  const mailerId = newId(IdPrefix.basicSmtp);
  await mailers.create(ctx.db, a.tenantId, {
    id: mailerId,
    configType: 'basic_smtp',
    connectionType: 'basic',
    name: 'smtp',
    email: 'a@example.com',
    config: { host: 'smtp.example.com', port: 587, username: 'u', secure: 'Auto' },
    sealedSecret: ctx.sealer.seal('pw'),
  });
  expect(
    await deactivateMailer(ctx.db, a.tenantId, mailerId, 'provider_auth_error', '535 bad credentials'),
  ).toBe('changed');
  await publishEmailEvent(ctx.bus, a.tenantId, emailEvent('SMTP_ERROR', at(3)));
  await eventually(() => allEvents(a.path).length >= 2, 'SMTP_ERROR and MAILER_DEACTIVATED');
  const events = allEvents(a.path) as unknown as Array<{ event: string; details: Record<string, unknown> }>;
  expect(events.map((e) => e.event).sort()).toEqual(['MAILER_DEACTIVATED', 'SMTP_ERROR']);
  const deact = events.find((e) => e.event === 'MAILER_DEACTIVATED')!;
  expect(deact).toEqual({
    event: 'MAILER_DEACTIVATED',
    success: false,
    details: {
      mailer_id: mailerId,
      config_type: 'basic_smtp',
      failed_reason: 'provider_auth_error',
      provider_error: '535 bad credentials',
    },
  });
  for (const b of bodies(a.path)) expect(Array.isArray(b)).toBe(true);
});

it('MAILER_DEACTIVATED of an IMAP config goes to that mailer’s own webhook as a single object', async () => {
  expect(IMAP_CAPABLE_CONFIG_TYPES).toContain('basic_imap');
  const a = await account({ delivery: true });
  const mailerId = await imapMailer(a, { 'X-Mailer-Auth': 'mailer-secret' });
  await deactivateMailer(ctx.db, a.tenantId, mailerId, 'provider_auth_error');
  await eventually(() => receiver.to(`${a.path}-mailer`).length === 1, 'mailer webhook called');
  const [req] = receiver.to(`${a.path}-mailer`);
  expect(req!.json).toEqual({
    event: 'MAILER_DEACTIVATED',
    success: false,
    details: { mailer_id: mailerId, config_type: 'basic_imap', failed_reason: 'provider_auth_error' },
  });
  expect(req!.headers['x-mailer-auth']).toBe('mailer-secret');
  expect(receiver.to(a.path)).toHaveLength(0);
});

it('MAILER_DEACTIVATED of an IMAP config without its own webhook falls back to the EMAIL_EVENT webhook as a one-element array', async () => {
  // Toggles that match none of it: the fallback bypasses them, as the SMTP-only routing does.
  const a = await account({ open: true });
  const mailerId = newId(IdPrefix.basicImap);
  await mailers.create(ctx.db, a.tenantId, {
    id: mailerId,
    configType: 'basic_imap',
    connectionType: 'basic',
    name: 'imap without webhook',
    email: 'a@example.com',
    config: { host: 'imap.example.com', port: 993, username: 'u', secure: 'SSL' },
    sealedSecret: ctx.sealer.seal('pw'),
  });
  await deactivateMailer(ctx.db, a.tenantId, mailerId, 'provider_auth_error', 'NO [AUTHENTICATIONFAILED]');
  await eventually(() => receiver.to(a.path).length === 1, 'EMAIL_EVENT webhook called');
  expect(receiver.to(a.path)[0]!.json).toEqual([
    {
      event: 'MAILER_DEACTIVATED',
      success: false,
      details: {
        mailer_id: mailerId,
        config_type: 'basic_imap',
        failed_reason: 'provider_auth_error',
        provider_error: 'NO [AUTHENTICATIONFAILED]',
      },
    },
  ]);
  expect(receiver.to(`${a.path}-mailer`)).toHaveLength(0);
});

it('DOMAIN_VERIFICATION goes to the domain webhook as a single object with its webhook_id', async () => {
  const a = await account({ delivery: true });
  const reg = await api(a)
    .post('/v1/webhook/register', {
      webhook_url: receiver.url(`${a.path}-domain`),
      event: 'DOMAIN_VERIFICATION',
      method: 'POST',
    })
    .expect(201);
  await publishDomainVerification(ctx.bus, a.tenantId, 'verified.example');
  await eventually(() => receiver.to(`${a.path}-domain`).length === 1, 'domain webhook called');
  const [req] = receiver.to(`${a.path}-domain`);
  expect(req!.json).toEqual({
    event: 'DOMAIN_VERIFICATION',
    details: {
      domain: 'verified.example',
      verified: true,
      mailer_id: 'domain_x',
      custom_args: {},
      webhook_id: reg.body.webhook_id,
    },
  });
  expect(
    new Webhook(reg.body.signing_secret).verify(req!.body, req!.headers as Record<string, string>),
  ).toBeTruthy();
});

it('a deactivated webhook gets nothing; re-activated it gets new events', async () => {
  const a = await account({ delivery: true });
  await api(a).put('/v1/webhook/update', { event: 'EMAIL_EVENT', active: false }).expect(200);
  const before = await eventsFlushed();
  await publishEmailEvent(ctx.bus, a.tenantId, emailEvent('MAIL_DELIVERED', at(1)));
  await eventually(async () => (await eventsFlushed()) >= before + 1, 'event routed');
  await api(a).put('/v1/webhook/update', { event: 'EMAIL_EVENT', active: true }).expect(200);
  await publishEmailEvent(ctx.bus, a.tenantId, emailEvent('MAIL_DELIVERED', at(2)));
  await eventually(() => allEvents(a.path).length >= 1, 'event after re-activation');
  expect(allEvents(a.path).map((e) => e.details.event_at)).toEqual([at(2)]);
});

it('retries after a 500 and after a timeout, recording every attempt; the deliveries API lists them', async () => {
  const a = await account({ delivery: true });
  let release: () => void = () => {};
  const never = new Promise<void>((r) => {
    release = r;
  });
  receiver.reply((req, n) => {
    if (req.path !== a.path) return { status: 200 };
    if (n === 0) return { status: 500 };
    if (n === 1) return { status: 200, hold: never }; // answered only after WEBHOOK_TIMEOUT_MS
    return { status: 204 };
  });
  try {
    await publishEmailEvent(ctx.bus, a.tenantId, emailEvent('MAIL_DELIVERED', at(1)));
    const list = await eventually(async () => {
      const res = await api(a).get('/v1/webhook/deliveries?status=delivered').expect(200);
      return res.body.data.length === 1 ? res.body : null;
    }, 'delivered after retries');
    expect(receiver.to(a.path).length).toBe(3);
    const ids = new Set(receiver.to(a.path).map((r) => r.headers['webhook-id']));
    expect(ids.size).toBe(1); // the same message id on every retry
    const d = list.data[0];
    expect(d).toMatchObject({
      webhook_id: a.webhookId,
      event_types: ['MAIL_DELIVERED'],
      status: 'delivered',
      next_attempt_at: null,
    });
    expect(d.attempts.map((x: { status_code: number | null }) => x.status_code)).toEqual([500, null, 204]);
    expect(d.attempts[0].error).toBe('HTTP 500');
    expect(d.attempts[1].error).toMatch(/timed out/);
    expect(d.attempts[2].error).toBe('');
    expect(list.totalCount).toBe(1);
  } finally {
    release();
    receiver.reply(() => ({ status: 200 }));
  }
});

it('a retry goes to the webhook as configured now (URL, headers, rotated secret); a deleted webhook’s retry is dropped', async () => {
  const a = await account({ delivery: true }, { 'X-Old': '1' });
  let release: () => void = () => {};
  const updated = new Promise<void>((r) => {
    release = r;
  });
  // The old URL fails every attempt, each held until the webhook is updated.
  receiver.reply((req) => (req.path === a.path ? { status: 500, hold: updated } : { status: 200 }));
  try {
    await publishEmailEvent(ctx.bus, a.tenantId, emailEvent('MAIL_DELIVERED', at(1)));
    await eventually(() => receiver.to(a.path).length >= 1, 'first attempt');
    await api(a)
      .put('/v1/webhook/update', {
        event: 'EMAIL_EVENT',
        webhook_url: receiver.url(`${a.path}-new`),
        headers: { 'X-New': '2' },
      })
      .expect(200);
    const rotated = await api(a).post('/v1/webhook/rotate-secret', { event: 'EMAIL_EVENT' }).expect(200);
    release();
    await eventually(() => receiver.to(`${a.path}-new`).length === 1, 'retry at the new URL');
    const retry = receiver.to(`${a.path}-new`)[0]!;
    expect(retry.headers['webhook-id']).toBe(receiver.to(a.path)[0]!.headers['webhook-id']);
    expect(retry.headers['x-new']).toBe('2');
    expect(retry.headers['x-old']).toBeUndefined();
    expect(() =>
      new Webhook(rotated.body.signing_secret).verify(retry.body, retry.headers as Record<string, string>),
    ).not.toThrow();
    expect(() => new Webhook(a.secret).verify(retry.body, retry.headers as Record<string, string>)).toThrow();

    // Deleted while its delivery waits for a retry: the retry is dropped, nothing is sent.
    const b = await account({ delivery: true });
    let deleted: () => void = () => {};
    const gone = new Promise<void>((r) => {
      deleted = r;
    });
    receiver.reply((req) => (req.path === b.path ? { status: 500, hold: gone } : { status: 200 }));
    await publishEmailEvent(ctx.bus, b.tenantId, emailEvent('MAIL_DELIVERED', at(1)));
    await eventually(() => receiver.to(b.path).length >= 1, 'first attempt');
    await request(app)
      .delete('/v1/webhook/delete')
      .set({ Authorization: `Bearer ${b.key}` })
      .send({ event: 'EMAIL_EVENT' })
      .expect(200);
    deleted();
    const dropped = await eventually(async () => {
      const { rows } = await ctx.db.query<{ status: string; dropped_reason: string }>(
        'SELECT status, dropped_reason FROM webhook_deliveries WHERE tenant_id = $1',
        [b.tenantId],
      );
      return rows[0]?.status === 'dropped' ? rows[0] : null;
    }, 'dropped after the delete');
    expect(dropped.dropped_reason).toBe('the webhook was deleted');
  } finally {
    release();
    receiver.reply(() => ({ status: 200 }));
  }
});

it('drops a delivery when the retry window is used up, with a record saying so; replay sends it again', async () => {
  const a = await account({ delivery: true });
  let failing = true;
  receiver.reply((req) => (req.path === a.path && failing ? { status: 503 } : { status: 200 }));
  try {
    await publishEmailEvent(ctx.bus, a.tenantId, emailEvent('MAIL_DELIVERED', at(1)));
    const dropped = await eventually(async () => {
      const res = await api(a).get('/v1/webhook/deliveries?status=dropped').expect(200);
      return res.body.data[0];
    }, 'dropped delivery');
    expect(dropped.attempts).toHaveLength(4); // first attempt + three retries (WEBHOOK_RETRY_DELAYS)
    expect(dropped.dropped_reason).toMatch(/retry window .* used up after 4 attempts/);
    failing = false;
    const replay = await api(a).post(`/v1/webhook/deliveries/${dropped.delivery_id}/replay`).expect(201);
    await eventually(
      () => receiver.to(a.path).some((r) => r.headers['webhook-id'] === replay.body.delivery_id),
      'replayed',
    );
    const again = receiver.to(a.path).find((r) => r.headers['webhook-id'] === replay.body.delivery_id)!;
    expect(again.body).toBe(receiver.to(a.path)[0]!.body);
    const view = await api(a).get(`/v1/webhook/deliveries/${replay.body.delivery_id}`).expect(200);
    expect(view.body.data).toMatchObject({ replay_of: dropped.delivery_id });
    await eventually(
      async () =>
        (await api(a).get(`/v1/webhook/deliveries/${replay.body.delivery_id}`)).body.data.status ===
        'delivered',
      'replay delivered',
    );
    // Filters and paging.
    const page1 = await api(a).get('/v1/webhook/deliveries?pageSize=1&event=MAIL_DELIVERED').expect(200);
    expect(page1.body).toMatchObject({ totalCount: 2 });
    expect(page1.body.data).toHaveLength(1);
    expect(page1.body.data[0].delivery_id).toBe(replay.body.delivery_id); // newest first
    const page2 = await api(a)
      .get(`/v1/webhook/deliveries?pageSize=1&event=MAIL_DELIVERED&pageToken=${page1.body.nextPageToken}`)
      .expect(200);
    expect(page2.body.data[0].delivery_id).toBe(dropped.delivery_id);
    expect(page2.body.nextPageToken).toBeNull();
    expect((await api(a).get('/v1/webhook/deliveries?event=MAIL_BOUNCE').expect(200)).body.totalCount).toBe(
      0,
    );
    expect(
      (await api(a).get('/v1/webhook/deliveries?startDate=2000-01-01&endDate=2000-01-02').expect(200)).body
        .totalCount,
    ).toBe(0);
    expect((await api(a).get('/v1/webhook/deliveries?status=nope').expect(400)).body.error).toMatch(
      /status must be one of/,
    );
    // Another tenant sees none of it.
    const other = await account({ delivery: true });
    await api(other).post(`/v1/webhook/deliveries/${dropped.delivery_id}/replay`).expect(404);
    expect((await api(other).get('/v1/webhook/deliveries').expect(200)).body.totalCount).toBe(0);
  } finally {
    receiver.reply(() => ({ status: 200 }));
  }
});

it('a hanging receiver gets at most WEBHOOK_ENDPOINT_CONCURRENCY requests at once and never delays another account', async () => {
  const slow = await account({ delivery: true });
  const fast = await account({ delivery: true });
  await api(slow)
    .post('/v1/webhook/register', {
      webhook_url: receiver.url(`${slow.path}-domain`),
      event: 'DOMAIN_VERIFICATION',
      method: 'POST',
    })
    .expect(201);
  let release: () => void = () => {};
  const held = new Promise<void>((r) => {
    release = r;
  });
  receiver.reply((req) =>
    req.path === `${slow.path}-domain` ? { status: 200, hold: held } : { status: 200 },
  );
  try {
    // Ten single-object deliveries to the slow endpoint (default WEBHOOK_ENDPOINT_CONCURRENCY 4).
    for (let i = 0; i < 10; i++) await publishDomainVerification(ctx.bus, slow.tenantId, `d${i}.example`);
    await eventually(() => receiver.to(`${slow.path}-domain`).length >= 4, 'slow endpoint saturated');
    await publishEmailEvent(ctx.bus, fast.tenantId, emailEvent('MAIL_DELIVERED', at(1)));
    await eventually(() => receiver.to(fast.path).length === 1, 'the other account served meanwhile');
    expect(receiver.maxOpen(`${slow.path}-domain`)).toBe(4);
  } finally {
    release();
    receiver.reply(() => ({ status: 200 }));
  }
  await eventually(
    () =>
      new Set(
        receiver
          .to(`${slow.path}-domain`)
          .map((r) => (r.json as { details: { domain: string } }).details.domain),
      ).size === 10,
    'every slow delivery made once released',
  );
  expect(receiver.maxOpen(`${slow.path}-domain`)).toBe(4);
});

it('a delivery older than the retry window (the dispatcher was down) is dropped, not sent', async () => {
  const a = await account({ delivery: true });
  await ctx.db.query(
    `INSERT INTO webhook_deliveries (id, tenant_id, target_kind, webhook_id, event_types, body, status, next_attempt_at, created_at)
     VALUES ($1, $2, 'webhook', $3, '{MAIL_DELIVERED}', '[]', 'pending', now(), now() - interval '2 days')`,
    [newId(IdPrefix.webhookDelivery), a.tenantId, a.webhookId],
  );
  const dropped = await eventually(async () => {
    const res = await api(a).get('/v1/webhook/deliveries?status=dropped').expect(200);
    return res.body.data[0];
  }, 'old delivery dropped');
  expect(dropped.attempts).toEqual([]);
  expect(dropped.dropped_reason).toMatch(/^older than the retry window/);
  expect(receiver.to(a.path)).toHaveLength(0);
});

it('headers stored before the header rule (Transfer-Encoding, a \\x01 value) make recorded failed attempts that say why; nothing is sent; fixed, a replay goes out', async () => {
  // A tenant webhook whose stored headers would have framed a second request.
  const a = await account({ delivery: true }, { 'X-Ok': '1' });
  await ctx.db.query('UPDATE webhooks SET header_names = $2, headers_sealed = $3 WHERE id = $1', [
    a.webhookId,
    ['Transfer-Encoding'],
    ctx.sealer.seal(JSON.stringify({ 'Transfer-Encoding': 'chunked' })),
  ]);
  await publishEmailEvent(ctx.bus, a.tenantId, emailEvent('MAIL_DELIVERED', at(1)));
  // An IMAP mailer's webhook with a control character in a value (every attempt used to throw
  // before anything was recorded).
  const mailerId = await imapMailer(a, { 'X-Bad': 'a\u0001b' });
  await deactivateMailer(ctx.db, a.tenantId, mailerId, 'provider_auth_error');

  const dropped = await eventually(async () => {
    const res = await api(a).get('/v1/webhook/deliveries?status=dropped').expect(200);
    return res.body.data.length === 2 ? res.body.data : null;
  }, 'both deliveries dropped after their attempts');
  const byTarget = Object.fromEntries(
    dropped.map(
      (d: { webhook_id: string; attempts: Array<{ status_code: number | null; error: string }> }) => [
        d.webhook_id,
        d.attempts,
      ],
    ),
  );
  expect(byTarget[a.webhookId]).toHaveLength(4); // the first attempt and three retries, all recorded
  for (const attempt of byTarget[a.webhookId])
    expect(attempt).toMatchObject({
      status_code: null,
      error: 'stored headers refused: headers.Transfer-Encoding cannot be set: the service sets this header',
    });
  expect(byTarget[mailerId]).toHaveLength(4);
  for (const attempt of byTarget[mailerId])
    expect(attempt).toMatchObject({
      status_code: null,
      error:
        'stored headers refused: headers.X-Bad must be a string of printable ASCII characters without control characters (at most 8192)',
    });
  expect(receiver.to(a.path)).toHaveLength(0);
  expect(receiver.to(`${a.path}-mailer`)).toHaveLength(0);

  // Headers given again under the rule: a replay is delivered with them.
  await api(a)
    .put('/v1/webhook/update', { event: 'EMAIL_EVENT', headers: { 'X-Ok': '2' } })
    .expect(200);
  const original = dropped.find((d: { webhook_id: string }) => d.webhook_id === a.webhookId);
  const replay = await api(a).post(`/v1/webhook/deliveries/${original.delivery_id}/replay`).expect(201);
  await eventually(() => receiver.to(a.path).length === 1, 'replay delivered');
  const [req] = receiver.to(a.path);
  expect(req!.headers['webhook-id']).toBe(replay.body.delivery_id);
  expect(req!.headers['x-ok']).toBe('2');
  expect(req!.headers['transfer-encoding']).toBeUndefined();
});

it('a custom User-Agent is sent verbatim in place of ours, with every other custom header, on both webhook kinds', async () => {
  const custom = {
    'user-AGENT': 'receiver-allowlist/3 (+ops)',
    Authorization: 'Bearer r3c3iver-T0ken',
    'X-Signature-Check': "a\tb  c !#$%&'()*+,-./:;<=>?@[]^_`{|}~",
  };
  const verbatim = (headers: Record<string, unknown>) => {
    expect(headers['user-agent']).toBe(custom['user-AGENT']);
    expect(headers.authorization).toBe(custom.Authorization);
    expect(headers['x-signature-check']).toBe(custom['X-Signature-Check']);
  };
  const a = await account({ delivery: true }, custom);
  await publishEmailEvent(ctx.bus, a.tenantId, emailEvent('MAIL_DELIVERED', at(1)));
  await eventually(() => receiver.to(a.path).length === 1, 'delivered');
  verbatim(receiver.to(a.path)[0]!.headers);
  // An IMAP mailer's incoming webhook with the same headers stored (the gateway's acceptance of
  // them: services/gateway/test/webhook-headers.test.ts); its MAILER_DEACTIVATED.
  const mailerId = await imapMailer(a, custom);
  await deactivateMailer(ctx.db, a.tenantId, mailerId, 'provider_auth_error');
  await eventually(() => receiver.to(`${a.path}-mailer`).length === 1, 'mailer webhook called');
  verbatim(receiver.to(`${a.path}-mailer`)[0]!.headers);
  const b = await account({ delivery: true });
  await publishEmailEvent(ctx.bus, b.tenantId, emailEvent('MAIL_DELIVERED', at(1)));
  await eventually(() => receiver.to(b.path).length === 1, 'delivered');
  expect(receiver.to(b.path)[0]!.headers['user-agent']).toBe('Mailyard-Webhooks/1.0');
});
