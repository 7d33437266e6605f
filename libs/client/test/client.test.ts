/**
 * @mailyard/client against a real gateway listening on a port (embedded stores): every endpoint
 * group, typed errors with the spec's envelope, 429 retry honouring Retry-After, network-error
 * retry for idempotent calls only (a proxy that swallows the first answer), async pagination,
 * and Standard Webhooks verification cross-checked with the reference `standardwebhooks` library.
 */
import { type AddressInfo, type Socket, connect, createServer } from 'node:net';
import { type WebhookReceiver, startWebhookReceiver } from '@mailyard/testkit/peers/webhook-receiver';
import { Webhook } from 'standardwebhooks';
import {
  AuthenticationError,
  BadRequestError,
  ConflictError,
  Mailyard,
  MailyardApiError,
  MailyardNetworkError,
  NotFoundError,
  PermissionError,
  RateLimitError,
  WebhookVerificationError,
  signWebhook,
  verifyWebhook,
} from '../src';
import { type Running, listen, stop } from './support/running-gateway';

/**
 * A TCP proxy to `target`: the first `swallow` connections are forwarded to the gateway (which
 * processes the request) but its answer is dropped and the client's socket destroyed.
 */
async function lossyProxy(target: string, swallow: number) {
  const { port } = new URL(target);
  let n = 0;
  const sockets = new Set<Socket>();
  const srv = createServer((client) => {
    sockets.add(client);
    const lose = n++ < swallow;
    const upstream = connect(Number(port), '127.0.0.1');
    sockets.add(upstream);
    client.pipe(upstream);
    upstream.on('data', (chunk) => {
      if (lose) {
        client.destroy();
        upstream.destroy();
      } else client.write(chunk);
    });
    upstream.on('end', () => client.end());
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`,
    connections: () => n,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        srv.close(() => r());
      }),
  };
}

const smtpMailer = {
  name: 'Relay',
  email: 'me@client.test',
  connection_type: 'basic',
  config: { host: '127.0.0.1', port: 2525, username: 'u', password: 'p', secure: 'None' },
} as const;

describe('@mailyard/client against a running gateway', () => {
  let run: Running | undefined;
  let client: Mailyard;
  let apiKey: string;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    // every endpoint in one minute passes the default 100 requests per window: a 429 would be
    // retried by the client and miscount the lossy proxy's connections
    run = await listen({ RATE_LIMIT_STANDARD: '1000000' });
    apiKey = (await run.gw.newTenant()).apiKey;
    client = new Mailyard({ apiKey, basePath: run.url });
    receiver = await startWebhookReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
    await stop(run);
  });

  it('templates: create, get, update, list page by page, delete', async () => {
    const created = await client.templates.create({
      name: 'Welcome',
      subject: 'Hi {{name}}',
      content: [{ type: 'text/plain', value: 'Hello {{name}}' }],
    });
    expect(created.success).toBe(true);
    const got = await client.templates.get(created.template_id);
    expect(got.template).toEqual({
      name: 'Welcome',
      subject: 'Hi {{name}}',
      content: [{ type: 'text/plain', value: 'Hello {{name}}' }],
    });
    await client.templates.update({ template_id: created.template_id, subject: 'Hello' });
    expect((await client.templates.get(created.template_id)).template.subject).toBe('Hello');

    for (let i = 0; i < 4; i++)
      await client.templates.create({
        name: `t${i}`,
        subject: 's',
        content: [{ type: 'text/html', value: 'x' }],
      });
    const firstPage = await client.templates.list({ pageSize: 2 });
    expect(firstPage.templates).toHaveLength(2);
    expect(firstPage.next_page_token).toEqual(expect.any(String));
    const all: string[] = [];
    for await (const t of client.templates.listAll({ pageSize: 2 })) all.push(t.id);
    expect(all).toHaveLength(5);
    expect(new Set(all).size).toBe(5);
    expect(all).toContain(created.template_id);

    await client.templates.delete(created.template_id);
    await expect(client.templates.get(created.template_id)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('errors carry the spec envelope and a class per status', async () => {
    const missing = await client.templates.get('tmpl_nope').catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(NotFoundError);
    expect(missing).toBeInstanceOf(MailyardApiError);
    expect((missing as NotFoundError).status).toBe(404);
    expect((missing as NotFoundError).envelope).toEqual({ success: false, error: 'Template not found' });

    const bad = await client.templates
      .create({ name: '', subject: 's', content: [{ type: 'text/plain', value: 'x' }] })
      .catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(BadRequestError);
    expect((bad as BadRequestError).error).toBe('name is required');

    const anon = new Mailyard({ apiKey: 'my_wrong', basePath: run!.url });
    const denied = await anon.templates.list().catch((e: unknown) => e);
    expect(denied).toBeInstanceOf(AuthenticationError);
    expect((denied as AuthenticationError).envelope.success).toBe(false);
  });

  it('keys and the audit log: a read key is refused a change (PermissionError), revoked keys fail', async () => {
    const made = await client.keys.create({ name: 'reader', scope: 'read' });
    expect(made.api_key).toMatch(/^myk_/);
    const listed = await client.keys.list();
    expect(listed.data.find((k) => k.key_id === made.key_id)).toMatchObject({
      name: 'reader',
      scope: 'read',
    });
    const reader = new Mailyard({ apiKey: made.api_key, basePath: run!.url });
    expect((await reader.templates.list()).success).toBe(true);
    const refused = await reader.templates
      .create({ name: 'x', subject: 's', content: [{ type: 'text/plain', value: 'x' }] })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(PermissionError);
    expect((refused as PermissionError).error).toBe('This API key is not allowed to change configuration');
    await client.keys.delete(made.key_id);
    await expect(reader.templates.list()).rejects.toBeInstanceOf(AuthenticationError);

    const actions: string[] = [];
    for await (const e of client.audit.listAll({ pageSize: 1 }))
      if (e.resource === 'api_key') actions.push(e.action);
    expect(actions).toEqual(['delete', 'create']);
    expect((await client.audit.list({ action: 'delete' })).data[0]).toMatchObject({
      resource: 'api_key',
      resource_id: made.key_id,
    });
  });

  it('mailers, send with an Idempotency-Key, logs, suppressions', async () => {
    const m = await client.mailers.createSmtp(smtpMailer);
    expect(m.mailer_id).toMatch(/^smtp_/);
    expect((await client.mailers.get(m.mailer_id)).data.config_type).toBe('smtp');
    expect((await client.mailers.disable(m.mailer_id)).state).toBe('disabled');
    expect((await client.mailers.enable(m.mailer_id)).state).toBe('active');
    await client.mailers.updateSmtp({ mailer_id: m.mailer_id, name: 'Relay 2' });
    const mailers: string[] = [];
    for await (const x of client.mailers.listAll({ pageSize: 1 })) mailers.push(x.name);
    expect(mailers).toEqual(['Relay 2']);

    const payload = {
      from: { email: 'me@client.test' },
      to: [{ email: 'a@example.test' }, { email: 'b@example.test' }],
      subject: 'From the client',
      content: [{ type: 'text/plain' as const, value: 'hi' }],
      mailer_id: m.mailer_id,
    };
    const sent = await client.emails.send(payload, { idempotencyKey: 'client-test-1' });
    expect(sent).toMatchObject({ success: true, message: 'queued', replayed: false });
    const again = await client.emails.send(payload, { idempotencyKey: 'client-test-1' });
    expect(again).toMatchObject({ ref_id: sent.ref_id, replayed: true });
    const generated = await client.emails.send(payload);
    expect(generated.idempotencyKey).toEqual(expect.any(String));
    expect(generated.ref_id).not.toBe(sent.ref_id);

    const logs = await client.logs.list({ refId: sent.ref_id });
    expect(logs.data.map((l) => l.recipient).sort()).toEqual(['a@example.test', 'b@example.test']);
    const all = [];
    for await (const l of client.logs.listAll({ pageSize: 1 })) all.push(l);
    expect(all).toHaveLength(4);
    // Its timeline: no event yet (no send service here), and an unknown ref_id is a NotFoundError.
    expect(await client.logs.events(sent.ref_id)).toEqual({ success: true, data: [], truncated: false });
    await expect(client.logs.events('01NOSUCHSEND0000000000000')).rejects.toBeInstanceOf(NotFoundError);

    await client.suppressions.unsubscribe('A@Example.test');
    expect((await client.suppressions.subscribe('a@example.test')).success).toBe(true);

    // The suppression list: bulk add, get and remove by an address that needs URL-encoding, pages.
    expect(
      await client.suppressions.add(['Jane+News@Example.test', 'max@example.test', 'MAX@example.test']),
    ).toEqual({
      success: true,
      added: 2,
      existing: 0,
    });
    expect(await client.suppressions.add(['gone@example.test'], 'hard_bounce')).toMatchObject({ added: 1 });
    expect((await client.suppressions.get('JANE+news@example.test')).data).toMatchObject({
      email: 'jane+news@example.test',
      reason: 'manual',
      ref_id: null,
    });
    expect((await client.suppressions.list({ reason: 'hard_bounce' })).data.map((e) => e.email)).toEqual([
      'gone@example.test',
    ]);
    const listed: string[] = [];
    for await (const e of client.suppressions.listAll({ email: 'example.test', pageSize: 1 }))
      listed.push(e.email);
    expect(listed.sort()).toEqual(['gone@example.test', 'jane+news@example.test', 'max@example.test']);
    expect((await client.suppressions.remove('jane+news@example.test')).message).toBe(
      'jane+news@example.test removed from the suppression list',
    );
    await expect(client.suppressions.get('jane+news@example.test')).rejects.toBeInstanceOf(NotFoundError);
    await expect(client.suppressions.remove('jane+news@example.test')).rejects.toBeInstanceOf(NotFoundError);
    await expect(client.suppressions.add([])).rejects.toBeInstanceOf(BadRequestError);

    await client.mailers.delete(m.mailer_id);
    await expect(client.mailers.get(m.mailer_id)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('schedules a send with sendAt and cancels it with cancelSend', async () => {
    const m = await client.mailers.createSmtp({ ...smtpMailer, name: 'Scheduled' });
    const sendAt = new Date(Date.now() + 3_600_000);
    const sent = await client.emails.send(
      {
        from: { email: 'me@client.test' },
        to: [{ email: 'later@example.test' }],
        subject: 'Later',
        content: [{ type: 'text/plain' as const, value: 'hi' }],
        mailer_id: m.mailer_id,
      },
      { sendAt },
    );
    expect(sent).toMatchObject({ success: true, message: 'scheduled' });
    expect((await client.logs.list({ refId: sent.ref_id })).data.map((l) => l.status)).toEqual(['SCHEDULED']);
    expect(await client.emails.cancelSend(sent.ref_id)).toEqual({
      success: true,
      message: 'Send cancelled',
      cancelled: 1,
    });
    expect((await client.logs.list({ refId: sent.ref_id })).data.map((l) => l.status)).toEqual(['CANCELLED']);
    await expect(client.emails.cancelSend(sent.ref_id)).rejects.toBeInstanceOf(ConflictError);
    await expect(client.emails.cancelSend('01JD5K7ZQ3X0V8Y2N4M6P8R0TF')).rejects.toBeInstanceOf(
      NotFoundError,
    );
    await client.mailers.delete(m.mailer_id);
  });

  it('domains: add, get, verify, list, report summaries, delete; a duplicate is a ConflictError', async () => {
    const added = await client.domains.add({ domain: 'client-sdk.test' });
    expect(added.data.domain).toBe('client-sdk.test');
    expect(added.data.records.length).toBeGreaterThan(0);
    await expect(client.domains.add({ domain: 'client-sdk.test' })).rejects.toBeInstanceOf(ConflictError);
    expect((await client.domains.get('client-sdk.test')).data.mailer_id).toBe(added.data.mailer_id);
    const verified = await client.domains.verify('client-sdk.test');
    expect(verified.data.verified).toBe(false);
    expect((await client.domains.list()).data.map((d) => d.domain)).toEqual(['client-sdk.test']);
    // The report summaries (no reports yet: zeros), their dates sent as query parameters.
    const dmarc = await client.domains.dmarc('client-sdk.test', {
      startDate: '2026-01-01',
      endDate: '2026-01-31',
    });
    expect(dmarc.data).toEqual({
      reports: 0,
      messages: 0,
      dmarc_pass: 0,
      dkim_aligned_pass: 0,
      spf_aligned_pass: 0,
      sources: [],
    });
    const tls = await client.domains.tlsReports('client-sdk.test', {
      startDate: '2026-01-01',
      endDate: '2026-01-03',
    });
    expect(tls.data.days.map((d) => d.date)).toEqual(['2026-01-01', '2026-01-02', '2026-01-03']);
    expect((await client.domains.tlsReports('client-sdk.test')).data.days).toHaveLength(30);
    await expect(client.domains.dmarc('client-sdk.test', { startDate: 'soon' })).rejects.toBeInstanceOf(
      BadRequestError,
    );
    await expect(client.domains.dmarc('nowhere-sdk.test')).rejects.toBeInstanceOf(NotFoundError);
    await client.domains.delete('client-sdk.test');
    await expect(client.domains.get('client-sdk.test')).rejects.toBeInstanceOf(NotFoundError);
  });

  it('SparkPost mailers: create (callback password once), update, get, delete', async () => {
    const m = await client.mailers.createSparkPost({
      name: 'SparkPost',
      email: 'news@example.com',
      config: { api_key: 'sp-key-1' },
    });
    expect(m.mailer_id).toMatch(/^sparkpost_/);
    expect(m.callback).toMatchObject({ username: m.mailer_id, password: expect.stringMatching(/^spcb_/) });
    expect(m.callback.url).toMatch(new RegExp(`/callbacks/sparkpost/${m.mailer_id}$`));
    await client.mailers.updateSparkPost({ mailer_id: m.mailer_id, config: { api_key: 'sp-key-2' } });
    const got = (await client.mailers.get(m.mailer_id)).data;
    expect(got).toMatchObject({ config_type: 'sparkpost', config: { base_url: null, api_key_set: true } });
    expect(JSON.stringify(got)).not.toContain(m.callback.password);
    await client.mailers.delete(m.mailer_id);
  });

  it('webhooks: register, list, update, rotate, deliveries, delete', async () => {
    const reg = await client.webhooks.register({
      webhook_url: receiver.url('/hook'),
      event: 'EMAIL_EVENT',
      method: 'POST',
      webhook_options: { events: { delivery: true } },
    });
    expect(reg.signing_secret).toMatch(/^whsec_/);
    expect((await client.webhooks.list()).webhooks[0]).toMatchObject({
      webhook_id: reg.webhook_id,
      active: true,
    });
    await client.webhooks.update({ event: 'EMAIL_EVENT', active: false });
    expect((await client.webhooks.list()).webhooks[0]?.active).toBe(false);
    const rotated = await client.webhooks.rotateSecret('EMAIL_EVENT');
    expect(rotated.signing_secret).not.toBe(reg.signing_secret);
    const deliveries = await client.webhooks.deliveries.list({ status: 'delivered' });
    expect(deliveries).toMatchObject({ success: true, data: [], totalCount: 0 });
    await expect(client.webhooks.deliveries.get('whd_nope')).rejects.toBeInstanceOf(NotFoundError);
    await expect(client.webhooks.deliveries.replay('whd_nope')).rejects.toBeInstanceOf(NotFoundError);
    await client.webhooks.delete('EMAIL_EVENT');
    await expect(client.webhooks.delete('EMAIL_EVENT')).rejects.toBeInstanceOf(NotFoundError);
  });

  it('retries a network failure for a send with an Idempotency-Key: one send, replayed answer', async () => {
    const m = await client.mailers.createSmtp(smtpMailer);
    const proxy = await lossyProxy(run!.url, 1);
    try {
      const viaProxy = new Mailyard({ apiKey, basePath: proxy.url, retry: { baseDelayMs: 10 } });
      const sent = await viaProxy.emails.send({
        from: { email: 'me@client.test' },
        to: [{ email: 'net@example.test' }],
        subject: 'retry',
        content: [{ type: 'text/plain', value: 'x' }],
        mailer_id: m.mailer_id,
      });
      // The first attempt reached the gateway; the retry got its recorded outcome.
      expect(sent.replayed).toBe(true);
      expect(proxy.connections()).toBe(2);
      expect((await client.logs.list({ email: 'net@example.test' })).totalCount).toBe(1);
    } finally {
      await proxy.close();
    }
  });

  it('does not retry a non-idempotent call after a network failure; does retry a GET', async () => {
    const proxy = await lossyProxy(run!.url, 1);
    try {
      const viaProxy = new Mailyard({ apiKey, basePath: proxy.url, retry: { baseDelayMs: 10 } });
      const err = await viaProxy.templates
        .create({ name: 'once', subject: 's', content: [{ type: 'text/plain', value: 'x' }] })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(MailyardNetworkError);
      expect(proxy.connections()).toBe(1);
      const list = await viaProxy.templates.list();
      expect(list.success).toBe(true);
      expect(proxy.connections()).toBe(2);
    } finally {
      await proxy.close();
    }
  });
});

describe('@mailyard/client and the rate limit', () => {
  let run: Running | undefined;
  let apiKey: string;
  beforeAll(async () => {
    run = await listen({ RATE_LIMIT_STANDARD: '2', RATE_LIMIT_WINDOW_SECONDS: '1' });
    apiKey = (await run.gw.newTenant()).apiKey;
  });
  afterAll(() => stop(run));

  it('waits for Retry-After on 429 and then succeeds', async () => {
    const client = new Mailyard({ apiKey, basePath: run!.url, retry: { retries: 5 } });
    for (let i = 0; i < 5; i++) expect((await client.templates.list()).success).toBe(true);
  });

  it('throws a RateLimitError with retryAfter when retries are off', async () => {
    const client = new Mailyard({ apiKey, basePath: run!.url, retry: { retries: 0 } });
    const errors: unknown[] = [];
    for (let i = 0; i < 4; i++) await client.templates.list().catch((e: unknown) => errors.push(e));
    expect(errors.length).toBeGreaterThan(0);
    const e = errors[0] as RateLimitError;
    expect(e).toBeInstanceOf(RateLimitError);
    expect(e.status).toBe(429);
    expect(e.retryAfter).toBeGreaterThanOrEqual(1);
    expect(e.envelope.error).toBe('Rate limit exceeded');
  });
});

describe('verifyWebhook (Standard Webhooks)', () => {
  const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
  const body = '[{"event":"MAIL_DELIVERED"}]';
  const now = Date.now();
  const ts = Math.floor(now / 1000);

  it('accepts what the reference library signs, and the reference library accepts ours', () => {
    const theirs = new Webhook(secret).sign('msg_1', new Date(ts * 1000), body);
    const headers = { 'webhook-id': 'msg_1', 'webhook-timestamp': String(ts), 'webhook-signature': theirs };
    expect(verifyWebhook(secret, body, headers, { now: () => now })).toEqual([{ event: 'MAIL_DELIVERED' }]);
    const ours = signWebhook(secret, 'msg_1', ts, body);
    expect(ours).toBe(theirs);
    expect(new Webhook(secret).verify(body, { ...headers, 'webhook-signature': ours })).toBeTruthy();
  });

  it('accepts any of several signatures and a Headers object', () => {
    const h = new Headers({
      'webhook-id': 'msg_2',
      'webhook-timestamp': String(ts),
      'webhook-signature': `v1,AAAA ${signWebhook(secret, 'msg_2', ts, body)}`,
    });
    expect(verifyWebhook(secret, Buffer.from(body), h, { now: () => now })).toBeTruthy();
  });

  it.each([
    ['a changed body', { body: `${body} ` }],
    ['another secret', { secret: `whsec_${Buffer.alloc(32, 8).toString('base64')}` }],
    ['an old timestamp', { ts: ts - 301 }],
    ['a missing signature', { sig: '' }],
  ])('refuses %s', (_name, over: { body?: string; secret?: string; ts?: number; sig?: string }) => {
    const t = over.ts ?? ts;
    const sig = over.sig ?? signWebhook(secret, 'msg_3', t, body);
    const headers = { 'webhook-id': 'msg_3', 'webhook-timestamp': String(t), 'webhook-signature': sig };
    expect(() =>
      verifyWebhook(over.secret ?? secret, over.body ?? body, headers, { now: () => now }),
    ).toThrow(WebhookVerificationError);
  });
});
