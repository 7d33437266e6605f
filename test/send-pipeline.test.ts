/**
 * The send pipeline across services, on the real servers: a template and a send through the
 * gateway's HTTP API, the send service rendering, DKIM-signing and relaying it to Postfix's
 * smtp-sink, and the outcome read back through GET /v1/email/logs.
 */
import type { ServiceContext } from '@mailyard/platform';
import { createTenant } from '@mailyard/store';
import { collectEmailEvents } from '@mailyard/testkit/email-events';
import { eventually } from '@mailyard/testkit/eventually';
import { dkimKeyPair, insertDomainMailer } from '@mailyard/testkit/fixtures';
import type { SmtpSink } from '@mailyard/testkit/peers/smtp-sink';
import { dkimVerify } from 'mailauth/lib/dkim/verify';
import request from 'supertest';
import { type SendStack, startSendStack } from './support/send-stack';

jest.setTimeout(120_000);

let stack: SendStack;
let sink: SmtpSink;
let ctx: ServiceContext;
let app: SendStack['app'];

beforeAll(async () => {
  stack = await startSendStack('pipeline-test');
  ({ sink, ctx, app } = stack);
});

afterAll(() => stack?.stop());

it('POST /v1/email/send with a template reaches the relay DKIM-signed and shows as delivered in the logs', async () => {
  // The gateway's outbox relay is not running here: the send service's relay publishes the
  // command rows too (both relays share the outbox table).
  const tenant = await createTenant(ctx.db, { name: 'pipeline', tier: 'enterprise' });
  const auth = { Authorization: `Bearer ${tenant.apiKey}` };
  const key = dkimKeyPair();
  const mailerId = await insertDomainMailer(ctx.db, ctx.sealer, tenant.id, {
    domain: 'pipeline.test',
    selector: 'sel',
    key,
  });

  const template = await request(app)
    .post('/v1/email/template')
    .set(auth)
    .send({
      name: 'Welcome',
      subject: 'Welcome, {{first}}',
      content: [{ type: 'text/html', value: '<p>Hi {{first}} &amp; co</p>' }],
    })
    .expect(201);
  const accepted = await request(app)
    .post('/v1/email/send')
    .set(auth)
    .send({
      from: { email: 'hello@pipeline.test', name: 'Pipeline' },
      to: [{ email: 'reader@example.com' }],
      mailer_id: mailerId,
      template_id: template.body.template_id,
      substitutions: { 'reader@example.com': { first: 'Ada' } },
      custom_args: { campaign: 'welcome' },
    })
    .expect(200);
  const refId: string = accepted.body.ref_id;

  const [message] = await sink.waitForMessages(1);
  expect(message!.to).toEqual(['reader@example.com']);
  expect(message!.message).toContain('Subject: Welcome, Ada');
  expect(message!.message).toContain('Hi Ada &amp; co');
  expect(message!.message).toContain(`Message-ID: <svc_mailer_${refId}.1@`);
  const verified = await dkimVerify(message!.message, {
    resolver: async (name: string, type: string) => {
      if (type === 'TXT' && name === 'sel._domainkey.pipeline.test') return [[key.txt]];
      throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
    },
  });
  expect(verified.results[0]?.status?.result).toBe('pass');

  const entry = await eventually(async () => {
    const res = await request(app).get('/v1/email/logs').query({ refId }).set(auth).expect(200);
    const row = res.body.data[0];
    return row?.status === 'MAIL_DELIVERED' ? row : null;
  }, 'log entry delivered');
  expect(entry).toMatchObject({
    ref_id: refId,
    recipient: 'reader@example.com',
    recipient_type: 'to',
    last_event: 'MAIL_DELIVERED',
    failure_reason: '',
    message_id: expect.stringMatching(/^<svc_mailer_.+>$/),
  });
  expect(entry.delivered_at).toEqual(expect.any(String));
});

it('continues the caller traceparent from the HTTP request to the MAIL_DELIVERED event on the bus', async () => {
  const busEvents = await collectEmailEvents(ctx.bus, `trace-test-${Date.now()}`);
  try {
    const tenant = await createTenant(ctx.db, { name: 'trace', tier: 'enterprise' });
    const key = dkimKeyPair();
    const mailerId = await insertDomainMailer(ctx.db, ctx.sealer, tenant.id, {
      domain: 'trace.test',
      selector: 's',
      key,
    });
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const accepted = await request(app)
      .post('/v1/email/send')
      .set({ Authorization: `Bearer ${tenant.apiKey}`, traceparent: `00-${traceId}-00f067aa0ba902b7-01` })
      .send({
        from: { email: 'hi@trace.test' },
        to: [{ email: 'someone@example.com' }],
        mailer_id: mailerId,
        subject: 'Traced',
        content: [{ type: 'text/plain', value: 'hello' }],
      })
      .expect(200);
    const delivered = await eventually(
      async () =>
        busEvents
          .items()
          .find((i) => i.event.details.ref_id === accepted.body.ref_id && i.event.event === 'MAIL_DELIVERED'),
      'MAIL_DELIVERED event on the bus',
    );
    expect(delivered.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
  } finally {
    await busEvents.cancel();
  }
});
