/**
 * Webhook registration API (docs/api/webhooks.md) on the real servers: the field rules
 * with their messages, ids, headers_present, activation, secrets, tenancy, and the URL
 * check (https only and publicly reachable unless WEBHOOK_ALLOW_INSECURE).
 */
import { createServer } from 'node:net';
import {
  ErrorText,
  IdPrefix,
  WEBHOOK_EVENT_TOGGLES,
  WebhookErrorText,
  WebhookHeaderText,
  hasIdPrefix,
} from '@mailyard/contracts';
import { type WebhookReceiver, startWebhookReceiver } from '@mailyard/testkit/peers/webhook-receiver';
import request from 'supertest';
import {
  type SharedStores,
  type TestGateway,
  bearer,
  createStores,
  startGateway,
  useGateway,
} from './support/harness';

let receiver: WebhookReceiver;
beforeAll(async () => {
  receiver = await startWebhookReceiver();
});
afterAll(() => receiver.close());

const closedPort = (): Promise<number> =>
  new Promise((resolve) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });

describe.each(['servers', 'embedded'] as const)(
  'webhook registration (%s, WEBHOOK_ALLOW_INSECURE=1)',
  (mode) => {
    const gw = useGateway(mode, { WEBHOOK_ALLOW_INSECURE: '1' });

    const emailBody = (over: Record<string, unknown> = {}) => ({
      webhook_url: receiver.url('/email'),
      event: 'EMAIL_EVENT',
      method: 'POST',
      headers: { 'X-Auth': 's3cret-value', 'X-Other': 'two' },
      webhook_options: { events: { delivery: true, bounce: true } },
      ...over,
    });

    it('registers an EMAIL_EVENT webhook: email_events_ id, secret shown once, header values never returned', async () => {
      const res = await gw.post('/v1/webhook/register', emailBody()).expect(201);
      expect(res.body).toMatchObject({ success: true, message: 'Webhook registered' });
      expect(hasIdPrefix(res.body.webhook_id, IdPrefix.emailEventsWebhook)).toBe(true);
      expect(res.body.signing_secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);

      const list = await gw.get('/v1/webhook').expect(200);
      expect(list.body.success).toBe(true);
      expect(list.body.webhooks).toHaveLength(1);
      const w = list.body.webhooks[0];
      expect(w).toMatchObject({
        webhook_id: res.body.webhook_id,
        event: 'EMAIL_EVENT',
        url: receiver.url('/email'),
        method: 'POST',
        active: true,
        headers_present: ['X-Auth', 'X-Other'],
      });
      expect(Object.keys(w.options.events).sort()).toEqual([...WEBHOOK_EVENT_TOGGLES].sort());
      expect(w.options.events).toMatchObject({
        delivery: true,
        bounce: true,
        open: false,
        imap_error: false,
      });
      expect(Date.parse(w.created_at)).not.toBeNaN();
      expect(JSON.stringify(list.body)).not.toContain('s3cret-value');
      expect(JSON.stringify(list.body)).not.toContain(res.body.signing_secret);
      // Sealed at rest too.
      const { rows } = await gw.ctx.db.query<{ h: Buffer }>('SELECT headers_sealed AS h FROM webhooks');
      expect(Buffer.from(rows[0]!.h).toString('latin1')).not.toContain('s3cret-value');
    });

    it('rule 4: a second webhook for the event type is 409 Webhook Already Exists', async () => {
      const res = await gw.post('/v1/webhook/register', emailBody()).expect(409);
      expect(res.body).toEqual({ success: false, error: ErrorText.webhookExists });
    });

    it('rule 1: at least one core toggle; phishing or imap_error alone do not count', async () => {
      const t = await gw.newTenant();
      for (const events of [
        {},
        { phishing: true },
        { imap_error: true },
        { phishing: true, imap_error: true },
      ]) {
        const res = await gw
          .post('/v1/webhook/register', emailBody({ webhook_options: { events } }), t.apiKey)
          .expect(400);
        expect(res.body.error).toBe('at least one of webhook_options.events must be true for EMAIL_EVENT');
      }
      const none = await gw
        .post('/v1/webhook/register', emailBody({ webhook_options: undefined }), t.apiKey)
        .expect(400);
      expect(none.body.error).toBe(ErrorText.webhookEventsRequired);
      await gw
        .post('/v1/webhook/register', emailBody({ webhook_options: { events: { spam: true } } }), t.apiKey)
        .expect(201);
    });

    it('rule 3: DOMAIN_VERIFICATION takes no webhook_options; its id is domain_<ulid>', async () => {
      const body = { webhook_url: receiver.url('/domain'), event: 'DOMAIN_VERIFICATION', method: 'POST' };
      const bad = await gw
        .post('/v1/webhook/register', { ...body, webhook_options: { events: { delivery: true } } })
        .expect(400);
      expect(bad.body.error).toBe('invalid webhook_options.events for DOMAIN_VERIFICATION');
      const ok = await gw.post('/v1/webhook/register', body).expect(201);
      expect(hasIdPrefix(ok.body.webhook_id, IdPrefix.domain)).toBe(true);
      const list = await gw.get('/v1/webhook').expect(200);
      const d = list.body.webhooks.find((w: { event: string }) => w.event === 'DOMAIN_VERIFICATION');
      expect(d).toMatchObject({ options: null, headers_present: [] });
    });

    it('validates fields: method POST only, event, url, headers', async () => {
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ method: 'GET' }, WebhookErrorText.methodInvalid],
        [{ method: undefined }, WebhookErrorText.methodRequired],
        [{ event: 'INCOMING_EMAIL' }, WebhookErrorText.eventInvalid],
        [{ event: undefined }, WebhookErrorText.eventRequired],
        [{ webhook_url: undefined }, WebhookErrorText.webhookUrlRequired],
        [{ webhook_url: 'ftp://example.com/x' }, WebhookErrorText.webhookUrlInsecureInvalid],
        [{ headers: { 'Bad Name': 'x' } }, WebhookErrorText.headerNameInvalid],
        [{ headers: { 'X-A': 'a\r\nInjected: 1' } }, WebhookHeaderText.value('headers', 'X-A')],
        [{ headers: { 'X-A': 1 } }, WebhookHeaderText.value('headers', 'X-A')],
        [
          { headers: { 'webhook-signature': 'x' } },
          'headers.webhook-signature cannot be set: the service sets this header',
        ],
        [
          { headers: { 'Content-Type': 'text/plain' } },
          'headers.Content-Type cannot be set: the service sets this header',
        ],
        [
          { webhook_options: { events: { delivery: 'yes' } } },
          'webhook_options.events.delivery must be a boolean',
        ],
      ];
      const t = await gw.newTenant();
      for (const [over, error] of cases) {
        const res = await gw.post('/v1/webhook/register', emailBody(over), t.apiKey).expect(400);
        expect({ over, error: res.body.error }).toEqual({ over, error });
      }
      expect((await gw.get('/v1/webhook', t.apiKey)).body.webhooks).toEqual([]);
    });

    it('a URL nothing listens on is 422', async () => {
      const t = await gw.newTenant();
      const res = await gw
        .post(
          '/v1/webhook/register',
          emailBody({ webhook_url: `http://127.0.0.1:${await closedPort()}/x` }),
          t.apiKey,
        )
        .expect(422);
      expect(res.body.error).toBe(WebhookErrorText.webhookUrlUnreachable);
      const unresolvable = await gw
        .post('/v1/webhook/register', emailBody({ webhook_url: 'http://no-such-host.invalid/x' }), t.apiKey)
        .expect(422);
      expect(unresolvable.body.error).toBe(WebhookErrorText.webhookUrlUnresolvable);
    });

    it('update: url, headers and options replace; active toggles; rules apply; 404 when absent', async () => {
      await gw
        .put('/v1/webhook/update', {
          event: 'EMAIL_EVENT',
          webhook_url: receiver.url('/email2'),
          headers: { 'X-New': 'v' },
          webhook_options: { events: { open: true } },
          active: false,
        })
        .expect(200, { success: true, message: 'Webhook updated' });
      let w = (await gw.get('/v1/webhook')).body.webhooks.find(
        (x: { event: string }) => x.event === 'EMAIL_EVENT',
      );
      expect(w).toMatchObject({ url: receiver.url('/email2'), headers_present: ['X-New'], active: false });
      expect(w.options.events).toMatchObject({ open: true, delivery: false, bounce: false });

      await gw.put('/v1/webhook/update', { event: 'EMAIL_EVENT', active: true }).expect(200);
      w = (await gw.get('/v1/webhook')).body.webhooks.find(
        (x: { event: string }) => x.event === 'EMAIL_EVENT',
      );
      expect(w).toMatchObject({ active: true, headers_present: ['X-New'], url: receiver.url('/email2') });

      const rule1 = await gw
        .put('/v1/webhook/update', { event: 'EMAIL_EVENT', webhook_options: { events: { phishing: true } } })
        .expect(400);
      expect(rule1.body.error).toBe(ErrorText.webhookEventsRequired);
      const rule3 = await gw
        .put('/v1/webhook/update', {
          event: 'DOMAIN_VERIFICATION',
          webhook_options: { events: { open: true } },
        })
        .expect(400);
      expect(rule3.body.error).toBe(ErrorText.webhookOptionsForDomain);
      const bad = await gw.put('/v1/webhook/update', { event: 'EMAIL_EVENT', active: 'no' }).expect(400);
      expect(bad.body.error).toBe(WebhookErrorText.activeInvalid);
      const t = await gw.newTenant();
      const missing = await gw
        .put('/v1/webhook/update', { event: 'EMAIL_EVENT', active: false }, t.apiKey)
        .expect(404);
      expect(missing.body.error).toBe(WebhookErrorText.webhookNotFound);
    });

    it('rotate-secret returns a new secret once', async () => {
      const res = await gw.post('/v1/webhook/rotate-secret', { event: 'EMAIL_EVENT' }).expect(200);
      expect(res.body.signing_secret).toMatch(/^whsec_/);
      const again = await gw.post('/v1/webhook/rotate-secret', { event: 'EMAIL_EVENT' }).expect(200);
      expect(again.body.signing_secret).not.toBe(res.body.signing_secret);
    });

    it("another tenant neither sees nor changes this tenant's webhooks", async () => {
      expect((await gw.get('/v1/webhook', gw.otherKey)).body.webhooks).toEqual([]);
      await gw.put('/v1/webhook/update', { event: 'EMAIL_EVENT', active: false }, gw.otherKey).expect(404);
      await gw.delete('/v1/webhook/delete', gw.otherKey).send({ event: 'EMAIL_EVENT' }).expect(404);
      await gw.post('/v1/webhook/rotate-secret', { event: 'EMAIL_EVENT' }, gw.otherKey).expect(404);
      // The other tenant may register its own EMAIL_EVENT webhook (one per event type per account).
      await gw.post('/v1/webhook/register', emailBody(), gw.otherKey).expect(201);
    });

    it('delete removes it; a second delete is 404; register works again', async () => {
      await gw.delete('/v1/webhook/delete').send({ event: 'EMAIL_EVENT' }).expect(200, {
        success: true,
        message: 'Webhook deleted',
      });
      await gw.delete('/v1/webhook/delete').send({ event: 'EMAIL_EVENT' }).expect(404);
      const bad = await gw.delete('/v1/webhook/delete').send({}).expect(400);
      expect(bad.body.error).toBe(WebhookErrorText.eventRequired);
      await gw.post('/v1/webhook/register', emailBody()).expect(201);
    });

    it('requires an API key', async () => {
      await request(gw.app).get('/v1/webhook').expect(401);
    });
  },
);

describe('webhook URL check without WEBHOOK_ALLOW_INSECURE', () => {
  let stores: SharedStores;
  let gw: TestGateway;
  let key: string;
  beforeAll(async () => {
    stores = await createStores('servers');
    gw = await startGateway(stores, { WEBHOOK_ALLOW_INSECURE: '0', WEBHOOK_CONNECT_TIMEOUT_MS: '2000' });
    key = (await gw.newTenant()).apiKey;
  });
  afterAll(async () => {
    await gw.close();
    await stores.drop();
  });

  const register = (url: string) =>
    request(gw.app)
      .post('/v1/webhook/register')
      .set(bearer(key))
      .send({
        webhook_url: url,
        event: 'EMAIL_EVENT',
        method: 'POST',
        webhook_options: { events: { delivery: true } },
      });

  it('http:// is refused with 400', async () => {
    const res = await register(receiver.url('/x')).expect(400);
    expect(res.body.error).toBe(WebhookErrorText.webhookUrlInvalid);
  });

  it.each([
    ['loopback', `https://127.0.0.1:${0}/x`],
    ['private 10/8', 'https://10.1.2.3/x'],
    ['metadata', 'https://169.254.169.254/latest/meta-data'],
    ['IPv6 loopback', 'https://[::1]/x'],
    ['a name resolving to loopback', 'https://localhost/x'],
  ])('%s is refused with 422, without naming the address', async (_what, url) => {
    const res = await register(url.replace(':0/', `:${receiver.port}/`)).expect(422);
    expect(res.body.error).toBe(WebhookErrorText.webhookUrlPrivate);
    expect(JSON.stringify(res.body)).not.toMatch(/127\.0\.0\.1|10\.1\.2\.3|169\.254|::1/);
  });
});
