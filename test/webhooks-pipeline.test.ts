/**
 * Webhooks end to end: (1) on the real servers, sends through the gateway API are delivered by
 * the send service to Postfix's smtp-sink and their MAIL_DELIVERED events reach the webhook,
 * batched, with the send request's trace; (2) the all-in-one process on embedded defaults
 * (`scripts/start.ts`): a domain verification through the API reaches the DOMAIN_VERIFICATION
 * webhook.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EmailEvent } from '@mailyard/contracts';
import { buildGatewayApp } from '@mailyard/gateway';
import {
  type RunningService,
  type ServiceContext,
  closeContext,
  configFrom,
  createLogger,
  openContext,
  traceIdOf,
} from '@mailyard/platform';
import { start as startSend } from '@mailyard/send';
import { createTenant } from '@mailyard/store';
import { dkimKeyPair, insertDomainMailer } from '@mailyard/testkit/fixtures';
import { type SmtpSink, startSmtpSink } from '@mailyard/testkit/peers/smtp-sink';
import { type WebhookReceiver, startWebhookReceiver } from '@mailyard/testkit/peers/webhook-receiver';
import { freePort, spawnTs } from '@mailyard/testkit/process';
import { type Stores, createStores } from '@mailyard/testkit/stores';
import { eventually } from '@mailyard/testkit/webhooks';
import { start as startDispatcher } from '@mailyard/webhook-dispatcher';
import request from 'supertest';

jest.setTimeout(120_000);

let receiver: WebhookReceiver;
beforeAll(async () => {
  receiver = await startWebhookReceiver();
});
afterAll(() => receiver.close());

describe('on the real servers', () => {
  let stores: Stores;
  let sink: SmtpSink;
  let ctx: ServiceContext;
  let services: RunningService[] = [];

  beforeAll(async () => {
    stores = await createStores();
    sink = await startSmtpSink({ dump: false });
    const config = configFrom({
      ...stores.env,
      LOG_LEVEL: 'error',
      OUTBOX_POLL_MS: '50',
      API_KEY_CACHE_MS: '0',
      SMTP_RELAY_URL: `smtp://127.0.0.1:${sink.port}`,
      WEBHOOK_ALLOW_INSECURE: '1',
    });
    ctx = await openContext(config, createLogger('webhooks-pipeline', 'error'));
    services = [await startSend(ctx), await startDispatcher(ctx)];
  });

  afterAll(async () => {
    for (const s of services) await s.stop();
    if (ctx) await closeContext(ctx);
    await sink?.stop();
    await stores?.drop();
  });

  it('sends through the API produce MAIL_DELIVERED webhooks carrying the send’s trace', async () => {
    const app = buildGatewayApp(ctx);
    const tenant = await createTenant(ctx.db, { name: 'pipeline', tier: 'enterprise' });
    const auth = { Authorization: `Bearer ${tenant.apiKey}` };
    const mailerId = await insertDomainMailer(ctx.db, ctx.sealer, tenant.id, {
      domain: 'hooks.test',
      key: dkimKeyPair(),
    });
    const reg = await request(app)
      .post('/v1/webhook/register')
      .set(auth)
      .send({
        webhook_url: receiver.url('/pipeline'),
        event: 'EMAIL_EVENT',
        method: 'POST',
        headers: { 'X-Pipeline': 'yes' },
        webhook_options: { events: { delivery: true } },
      })
      .expect(201);
    const trace = '4bf92f3577b34da6a3ce929d0e0e4736';
    const to = ['a@example.com', 'b@example.com', 'c@example.com'];
    const accepted = await request(app)
      .post('/v1/email/send')
      .set({ ...auth, traceparent: `00-${trace}-00f067aa0ba902b7-01` })
      .send({
        from: { email: 'hello@hooks.test' },
        to: to.map((email) => ({ email })),
        subject: 'Hi {{name}}',
        content: [{ type: 'text/plain', value: 'Hello {{name}}' }],
        substitutions: Object.fromEntries(to.map((e) => [e, { name: e }])),
        mailer_id: mailerId,
        custom_args: { order: 42 },
      })
      .expect(200);
    const events = await eventually(() => {
      const all = receiver.to('/pipeline').flatMap((r) => r.json as EmailEvent[]);
      return all.length >= 3 ? all : null;
    }, 'three MAIL_DELIVERED events');
    expect(events).toHaveLength(3);
    for (const e of events) {
      expect(e).toMatchObject({
        event: 'MAIL_DELIVERED',
        success: true,
        details: {
          ref_id: accepted.body.ref_id,
          mailer_id: mailerId,
          webhook_id: reg.body.webhook_id,
          custom_args: { order: 42 },
        },
      });
    }
    expect(events.flatMap((e) => e.details.email).sort()).toEqual(to);
    for (const r of receiver.to('/pipeline')) {
      expect(traceIdOf(String(r.headers.traceparent))).toBe(trace);
      expect(r.headers['x-pipeline']).toBe('yes');
      const batch = r.json as EmailEvent[];
      const stamps = batch.map((e) => e.details.event_at);
      expect([...stamps].sort()).toEqual(stamps);
    }
  });
});

describe('all-in-one process on embedded defaults', () => {
  it('a domain verification reaches the DOMAIN_VERIFICATION webhook', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'mailyard-webhooks-'));
    const key = 'myk_webhooks_embedded_test_key_0123456789abcdef';
    const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };
    const port = await freePort();
    const p = spawnTs('scripts/start.ts', {
      DATA_DIR: dataDir,
      PORT: String(port),
      TRACKING_PORT: '0',
      SMTP_PORT: '0',
      BOOTSTRAP_API_KEY: key,
      DATABASE_URL: '',
      AMQP_URL: '',
      REDIS_URL: '',
      WEBHOOK_ALLOW_INSECURE: '1',
      DNS_SERVERS: `127.0.0.1:${await freePort()}`,
      DNS_TIMEOUT_MS: '200',
      DNS_TRIES: '1',
    });
    try {
      // A whole process (TypeScript loader, PGlite, migrations) starting on a loaded 2-core machine:
      // 60 s ran out in a stress loop at load 25 (first-run and compiled-start allow 120-240 s).
      await p.waitFor(/Mailyard mailyard started \(embedded mode\)/, 240_000);
      expect(p.output()).toContain('webhook-dispatcher: consuming');
      const base = `http://127.0.0.1:${port}`;
      const reg = await fetch(`${base}/v1/webhook/register`, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          webhook_url: receiver.url('/embedded'),
          event: 'DOMAIN_VERIFICATION',
          method: 'POST',
        }),
      });
      expect(reg.status).toBe(201);
      const { webhook_id } = (await reg.json()) as { webhook_id: string };
      const add = await fetch(`${base}/v1/domain/add`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ domain: 'embedded.example' }),
      });
      expect(add.status).toBe(201);
      const verify = await fetch(`${base}/v1/domain/verify/embedded.example`, { method: 'PUT', headers });
      expect(verify.status).toBe(200);
      await eventually(() => receiver.to('/embedded').length >= 1, 'DOMAIN_VERIFICATION delivered', 60_000);
      expect(receiver.to('/embedded')[0]!.json).toMatchObject({
        event: 'DOMAIN_VERIFICATION',
        details: { domain: 'embedded.example', verified: false, webhook_id },
      });
      const list = await fetch(`${base}/v1/webhook/deliveries?event=DOMAIN_VERIFICATION`, { headers });
      expect(((await list.json()) as { totalCount: number }).totalCount).toBeGreaterThanOrEqual(1);
      p.child.kill('SIGTERM');
      expect((await p.exited).code).toBe(0);
    } finally {
      p.child.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 360_000);
});
