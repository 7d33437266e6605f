/**
 * Custom webhook headers over HTTP, on every route that takes them (issue 23 items 6 and 7):
 * - one rule for every webhook kind (contracts validation/webhook-headers.ts): tenant webhook
 *   register/update, inbound route create/update, IMAP mailer create/verify/update refuse the
 *   same bad headers with the same message (field named as the route names it), store nothing,
 *   and accept what the rule allows (a custom User-Agent included);
 * - stored headers follow a URL change only within its origin: a new scheme, host or port
 *   without `headers` given again is a 400, as a mailer password is (docs/architecture.md, security 7).
 */
import { WebhookHeaderText } from '@mailyard/contracts';
import { loadInboundWebhook, loadMailerWebhook, loadWebhookById } from '@mailyard/store';
import { type WebhookReceiver, startWebhookReceiver } from '@mailyard/testkit/peers/webhook-receiver';
import type { Test } from 'supertest';
import { useGateway } from './support/harness';

let receiver: WebhookReceiver;
let other: WebhookReceiver;
beforeAll(async () => {
  receiver = await startWebhookReceiver();
  other = await startWebhookReceiver();
});
afterAll(async () => {
  await receiver.close();
  await other.close();
});

const T = WebhookHeaderText;

/** Bad header sets as a request carries them, and the rule's message for field `f`. */
const BAD: Array<[string, () => unknown, (f: string) => string]> = [
  [
    'Transfer-Encoding',
    () => ({ 'Transfer-Encoding': 'chunked' }),
    (f) => T.reserved(f, 'Transfer-Encoding'),
  ],
  ['Host', () => ({ Host: 'internal.example' }), (f) => T.reserved(f, 'Host')],
  ['Content-Length', () => ({ 'content-length': '0' }), (f) => T.reserved(f, 'content-length')],
  ['webhook-signature', () => ({ 'webhook-signature': 'v1,x' }), (f) => T.reserved(f, 'webhook-signature')],
  // Reserved in any case, the message naming the header as the request wrote it.
  ['Webhook-ID (mixed case)', () => ({ 'X-Ok': '1', 'Webhook-ID': 'x' }), (f) => T.reserved(f, 'Webhook-ID')],
  ['TraceParent (mixed case)', () => ({ TraceParent: '00-x' }), (f) => T.reserved(f, 'TraceParent')],
  [
    'CONTENT-TYPE (upper case)',
    () => ({ 'CONTENT-TYPE': 'text/plain' }),
    (f) => T.reserved(f, 'CONTENT-TYPE'),
  ],
  [
    'x-History-Backfill-job-ID (the service’s own delivery header)',
    () => ({ 'x-History-Backfill-job-ID': 'forged' }),
    (f) => T.reserved(f, 'x-History-Backfill-job-ID'),
  ],
  ['CR/LF', () => ({ 'X-A': 'a\r\nInjected: 1' }), (f) => T.value(f, 'X-A')],
  // NUL in any JSON string is refused by the body check (contracts json-input.ts) before any schema.
  ['NUL', () => ({ 'X-A': 'a\u0000b' }), (f) => `${f}.X-A must not contain NUL characters`],
  ['\\x01', () => ({ 'X-A': 'a\u0001b' }), (f) => T.value(f, 'X-A')],
  ['DEL', () => ({ 'X-A': 'a\u007f' }), (f) => T.value(f, 'X-A')],
  ['non-ASCII', () => ({ 'X-A': '€' }), (f) => T.value(f, 'X-A')],
  ['a huge value', () => ({ 'X-A': 'x'.repeat(8193) }), (f) => T.value(f, 'X-A')],
  ['a non-token name', () => ({ 'X A': 'v' }), (f) => T.name(f)],
  ['__proto__', () => JSON.parse('{"__proto__": "v"}'), (f) => T.name(f)],
  [
    '51 headers',
    () => Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`X-${i}`, 'v'])),
    (f) => T.tooMany(f),
  ],
  ['a name twice', () => ({ 'X-A': '1', 'x-a': '2' }), (f) => T.twice(f, 'x-a')],
];

describe('webhook headers on every route that takes them (embedded)', () => {
  const gw = useGateway('embedded', { WEBHOOK_ALLOW_INSECURE: '1' });
  let key: string;
  let tenantId: string;
  let mailerId: string;
  let webhookId: string;

  beforeAll(async () => {
    // Enterprise: every case below is one request of this tenant.
    ({ apiKey: key, tenantId } = await gw.newTenant('enterprise'));
    await gw.post('/v1/domain/add', { domain: 'in.example.com' }, key).expect(201);
    await gw.ctx.db.query('UPDATE domains SET verified = true WHERE tenant_id = $1', [tenantId]);
    const stored = { 'X-Auth': 'kept' };
    webhookId = (
      await gw
        .post(
          '/v1/webhook/register',
          {
            webhook_url: receiver.url('/hook'),
            event: 'DOMAIN_VERIFICATION',
            method: 'POST',
            headers: stored,
          },
          key,
        )
        .expect(201)
    ).body.webhook_id;
    await gw
      .post(
        '/v1/inbound/relay_webhook',
        { domain: 'in.example.com', url: receiver.url('/in'), method: 'POST', headers: stored },
        key,
      )
      .expect(200);
    mailerId = (
      await gw.post('/v1/mailer/imap', imapBody({ url: 'https://h.example/m', headers: stored }), key)
    ).body.mailer_id;
  });

  const imapBody = (webhook: object) => ({
    name: 'inbox',
    email: 'inbox@imap.test',
    config: { host: '192.0.2.10', username: 'inbox@imap.test', password: 'pw' },
    webhook,
  });

  /** Each route with a body whose only flaw may be its headers, and the field it names them by. */
  const routes: Array<[string, 'post' | 'put', string, (h: unknown) => object, string]> = [
    [
      'POST /v1/webhook/register',
      'post',
      '/v1/webhook/register',
      (headers) => ({ webhook_url: receiver.url('/e'), event: 'EMAIL_EVENT', method: 'POST', headers }),
      'headers',
    ],
    [
      'PUT /v1/webhook/update',
      'put',
      '/v1/webhook/update',
      (headers) => ({ event: 'DOMAIN_VERIFICATION', headers }),
      'headers',
    ],
    [
      'POST /v1/inbound/relay_webhook',
      'post',
      '/v1/inbound/relay_webhook',
      (headers) => ({ domain: 'in.example.com', url: receiver.url('/in'), method: 'POST', headers }),
      'headers',
    ],
    [
      'PUT /v1/inbound/update/{domain}',
      'put',
      '/v1/inbound/update/in.example.com',
      (headers) => ({ headers }),
      'headers',
    ],
    [
      'POST /v1/mailer/imap',
      'post',
      '/v1/mailer/imap',
      (headers) => imapBody({ url: 'https://h.example/m', headers }),
      'webhook.headers',
    ],
    [
      'POST /v1/imapbasic/verify',
      'post',
      '/v1/imapbasic/verify',
      (headers) => imapBody({ url: 'https://h.example/m', headers }),
      'webhook.headers',
    ],
    [
      'PUT /v1/mailer/imap',
      'put',
      '/v1/mailer/imap',
      (headers) => ({ mailer_id: mailerId, webhook: { url: 'https://h.example/m', headers } }),
      'webhook.headers',
    ],
  ];

  it.each(routes)('%s refuses every bad header set with the rule’s 400, storing nothing', async (...r) => {
    const [, method, path, body, field] = r;
    const mailersBefore = await gw.ctx.db.query('SELECT count(*)::int AS n FROM mailers');
    for (const [name, headers, message] of BAD) {
      const res = await gw[method](path, body(headers()), key);
      expect({ name, status: res.status, body: res.body }).toEqual({
        name,
        status: 400,
        body: { success: false, error: message(field) },
      });
    }
    // Nothing was created or replaced.
    expect((await gw.ctx.db.query('SELECT count(*)::int AS n FROM mailers')).rows).toEqual(
      mailersBefore.rows,
    );
    expect((await gw.get('/v1/webhook', key)).body.webhooks.map((w: { event: string }) => w.event)).toEqual([
      'DOMAIN_VERIFICATION',
    ]);
    expect((await loadWebhookById(gw.ctx.db, gw.ctx.sealer, tenantId, webhookId))?.headers).toEqual({
      'X-Auth': 'kept',
    });
    expect((await loadInboundWebhook(gw.ctx.db, gw.ctx.sealer, tenantId, 'in.example.com'))?.headers).toEqual(
      {
        'X-Auth': 'kept',
      },
    );
    expect((await loadMailerWebhook(gw.ctx.db, gw.ctx.sealer, tenantId, mailerId))?.headers).toEqual({
      'X-Auth': 'kept',
    });
  });

  it('accepts what the rule allows, a custom User-Agent included, and stores it verbatim', async () => {
    const headers = {
      'user-AGENT': 'receiver-check/2',
      'X-Token': "tab\tand !#$%&'()*+,-./:;<=>?@[]^_`{|}~",
    };
    const t = await gw.newTenant('enterprise');
    const reg = await gw
      .post(
        '/v1/webhook/register',
        {
          webhook_url: receiver.url('/ua'),
          event: 'EMAIL_EVENT',
          method: 'POST',
          headers,
          webhook_options: { events: { delivery: true } },
        },
        t.apiKey,
      )
      .expect(201);
    expect(
      (await loadWebhookById(gw.ctx.db, gw.ctx.sealer, t.tenantId, reg.body.webhook_id))?.headers,
    ).toEqual(headers);
    const m = await gw.post('/v1/mailer/imap', imapBody({ url: 'https://h.example/ua', headers }), t.apiKey);
    expect(m.status).toBe(201);
    expect(
      (await loadMailerWebhook(gw.ctx.db, gw.ctx.sealer, t.tenantId, m.body.mailer_id))?.headers,
    ).toEqual(headers);
  });
});

describe('stored headers follow a URL change only within its origin (embedded)', () => {
  const gw = useGateway('embedded', { WEBHOOK_ALLOW_INSECURE: '1' });
  const needed = T.neededAgain;

  /** Each URL, sent as an update, answers 400 with `error`. */
  const refusesEach = async (urls: string[], update: (url: string) => Test, error: string) => {
    for (const url of urls) {
      const res = await update(url);
      expect({ url, status: res.status, body: res.body }).toEqual({
        url,
        status: 400,
        body: { success: false, error },
      });
    }
  };

  it('tenant webhook: a new port, host or scheme needs `headers` again; a new path keeps them', async () => {
    const t = await gw.newTenant('enterprise');
    const reg = await gw
      .post(
        '/v1/webhook/register',
        {
          webhook_url: receiver.url('/a'),
          event: 'DOMAIN_VERIFICATION',
          method: 'POST',
          headers: { 'X-Auth': 'secret-for-a' },
        },
        t.apiKey,
      )
      .expect(201);
    const stored = () => loadWebhookById(gw.ctx.db, gw.ctx.sealer, t.tenantId, reg.body.webhook_id);
    const update = (body: object) =>
      gw.put('/v1/webhook/update', { event: 'DOMAIN_VERIFICATION', ...body }, t.apiKey);
    await refusesEach(
      [
        other.url('/a'), // another port
        `http://localhost:${receiver.port}/a`, // another host
        `https://127.0.0.1:${receiver.port}/a`, // another scheme
      ],
      (webhook_url) => update({ webhook_url }),
      needed('headers', 'webhook_url'),
    );
    expect(await stored()).toMatchObject({ url: receiver.url('/a'), headers: { 'X-Auth': 'secret-for-a' } });
    // The same origin: the headers stay.
    await update({ webhook_url: receiver.url('/b?x=1') }).expect(200);
    expect(await stored()).toMatchObject({
      url: receiver.url('/b?x=1'),
      headers: { 'X-Auth': 'secret-for-a' },
    });
    // Given again (or cleared with {}), the URL may move.
    await update({ webhook_url: other.url('/c'), headers: { 'X-Auth': 'secret-for-c' } }).expect(200);
    expect(await stored()).toMatchObject({ url: other.url('/c'), headers: { 'X-Auth': 'secret-for-c' } });
    await update({ webhook_url: receiver.url('/d'), headers: {} }).expect(200);
    expect(await stored()).toMatchObject({ url: receiver.url('/d'), headers: {} });
    // Nothing stored, nothing to give again.
    await update({ webhook_url: other.url('/e') }).expect(200);
    // An invalid URL is still its own 400, before the header rule.
    expect((await update({ webhook_url: 'ftp://x.example/' })).body.error).toMatch(/webhook_url must be/);
  });

  it('inbound route: the same rule on `url`', async () => {
    const t = await gw.newTenant('enterprise');
    await gw.post('/v1/domain/add', { domain: 'move.example.com' }, t.apiKey).expect(201);
    await gw.ctx.db.query('UPDATE domains SET verified = true WHERE tenant_id = $1', [t.tenantId]);
    await gw
      .post(
        '/v1/inbound/relay_webhook',
        {
          domain: 'move.example.com',
          url: receiver.url('/in'),
          method: 'POST',
          headers: { 'X-Auth': 'in-secret' },
        },
        t.apiKey,
      )
      .expect(200);
    const stored = () => loadInboundWebhook(gw.ctx.db, gw.ctx.sealer, t.tenantId, 'move.example.com');
    const update = (body: object) => gw.put('/v1/inbound/update/move.example.com', body, t.apiKey);
    const res = await update({ url: other.url('/in') });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ success: false, error: needed('headers', 'url') });
    expect(await stored()).toMatchObject({ url: receiver.url('/in'), headers: { 'X-Auth': 'in-secret' } });
    await update({ url: receiver.url('/in2'), wildcard: true }).expect(200);
    expect(await stored()).toMatchObject({ url: receiver.url('/in2'), headers: { 'X-Auth': 'in-secret' } });
    await update({ url: other.url('/in'), headers: { 'X-Other': 'o' } }).expect(200);
    expect(await stored()).toMatchObject({ url: other.url('/in'), headers: { 'X-Other': 'o' } });
  });

  it('IMAP mailer webhook: the same rule on `webhook.url`; without `webhook.headers` the stored ones stay for the same origin', async () => {
    const t = await gw.newTenant('enterprise');
    const created = await gw.post(
      '/v1/mailer/imap',
      {
        name: 'inbox',
        email: 'inbox@imap.test',
        config: { host: '192.0.2.10', username: 'inbox@imap.test', password: 'pw' },
        webhook: { url: 'https://hooks.example.com/a', headers: { Authorization: 'Bearer mailer-secret' } },
      },
      t.apiKey,
    );
    expect(created.status).toBe(201);
    const id = created.body.mailer_id;
    const stored = () => loadMailerWebhook(gw.ctx.db, gw.ctx.sealer, t.tenantId, id);
    const update = (webhook: object) => gw.put('/v1/mailer/imap', { mailer_id: id, webhook }, t.apiKey);
    await refusesEach(
      ['https://evil.example/a', 'https://hooks.example.com:8443/a', 'http://hooks.example.com/a'],
      (url) => update({ url }),
      needed('webhook.headers', 'webhook.url'),
    );
    expect(await stored()).toEqual({
      url: 'https://hooks.example.com/a',
      method: 'POST',
      headers: { Authorization: 'Bearer mailer-secret' },
    });
    await update({ url: 'https://HOOKS.example.com/b', method: 'PUT' }).expect(200);
    expect(await stored()).toEqual({
      url: 'https://HOOKS.example.com/b',
      method: 'PUT',
      headers: { Authorization: 'Bearer mailer-secret' },
    });
    expect((await gw.get(`/v1/mailer/${id}`, t.apiKey)).body.data.webhook.headers_present).toEqual([
      'Authorization',
    ]);
    await update({ url: 'https://evil.example/a', headers: {} }).expect(200);
    expect(await stored()).toEqual({ url: 'https://evil.example/a', method: 'POST', headers: {} });
  });
});
