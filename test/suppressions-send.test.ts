/**
 * The suppression list end to end, on the real servers (PostgreSQL, RabbitMQ, Redis): tracked
 * sends through the gateway API and the send service to a real SMTP receiver; the message's
 * one-click unsubscribe (RFC 8058) POSTed to the tracking service (its own context, as its own
 * process would have) suppresses with reason `unsubscribe` and the send's ref_id, read back through
 * GET /v1/suppressions; the next send is suppressed; DELETE /v1/suppressions/{email} makes the
 * address deliverable again (a real delivery, not suppressed in the log). An address added
 * through POST /v1/suppressions is honoured at send the same way. (DSN and ARF: test/bounces.test.ts.)
 */
import { start as startSend } from '@mailyard/send';
import { createTenant } from '@mailyard/store';
import { eventually } from '@mailyard/testkit/eventually';
import { insertSmtpMailer } from '@mailyard/testkit/fixtures';
import { parseMessage } from '@mailyard/testkit/mime';
import { type SmtpReceiver, startSmtpReceiver } from '@mailyard/testkit/peers/smtp-receiver';
import { freePort } from '@mailyard/testkit/process';
import { createStores } from '@mailyard/testkit/stores';
import { trackedSendEnv } from '@mailyard/testkit/tracked-send-env';
import { start as startTracking } from '@mailyard/tracking';
import request from 'supertest';
import { type OnContext, startOnContext } from './support/send-stack';

jest.setTimeout(120_000);

/** The send service with the gateway, and the tracking service on its own context (as its own process). */
let sending: OnContext;
let tracking: OnContext;
let receiver: SmtpReceiver;
let gateway: OnContext['app'];
let trackingBase = '';
let drop: () => Promise<void> = async () => {};
let auth: Record<string, string>;
let mailerId = '';

beforeAll(async () => {
  receiver = await startSmtpReceiver();
  const trackingPort = await freePort();
  const stores = await createStores();
  drop = stores.drop;
  const env = { ...stores.env, ...trackedSendEnv(trackingPort) };
  sending = await startOnContext('suppressions-send-test', env, [startSend]);
  tracking = await startOnContext('suppressions-send-test', env, [startTracking]);
  gateway = sending.app;
  trackingBase = `http://127.0.0.1:${trackingPort}`;
  const sendCtx = sending.ctx;
  const tenant = await createTenant(sendCtx.db, { name: 'suppressions-send', tier: 'enterprise' });
  auth = { Authorization: `Bearer ${tenant.apiKey}` };
  mailerId = await insertSmtpMailer(sendCtx.db, sendCtx.sealer, tenant.id, { port: receiver.port });
});

afterAll(async () => {
  await tracking?.stop();
  await sending?.stop();
  await receiver?.close();
  await drop();
});

async function send(to: string): Promise<string> {
  const res = await request(gateway)
    .post('/v1/email/send')
    .set(auth)
    .send({
      from: { email: 'news@sender.example' },
      to: [{ email: to }],
      mailer_id: mailerId,
      subject: 'Newsletter',
      content: [{ type: 'text/html', value: '<p>News</p>' }],
      settings: { open_tracking: { enable: true } },
    })
    .expect(200);
  return res.body.ref_id as string;
}

type Log = { status: string; failure_reason: string; delivered_at: string | null };
const logOf = async (refId: string): Promise<Log | undefined> =>
  (await request(gateway).get('/v1/email/logs').query({ refId }).set(auth).expect(200)).body.data[0];
/** The log entry once the send reached an outcome (delivered, or failed as suppressed). */
const outcomeOf = (refId: string) =>
  eventually(async () => {
    const log = await logOf(refId);
    return log && log.status !== 'QUEUED' ? log : null;
  }, `outcome of ${refId}`);
/** Messages the receiver took for `to` (envelope addresses compared case-insensitively). */
const received = (to: string) =>
  receiver.messages.filter((m) => m.to.some((t) => t.toLowerCase() === to.toLowerCase()));
const suppressionOf = (email: string) =>
  request(gateway)
    .get(`/v1/suppressions/${encodeURIComponent(email)}`)
    .set(auth);

it('one-click unsubscribe records reason and ref_id; the next send is suppressed; DELETE makes it deliverable again', async () => {
  const reader = 'Reader+News@Example.com';
  const first = await send(reader);
  expect(await outcomeOf(first)).toMatchObject({ status: 'MAIL_DELIVERED', failure_reason: '' });
  const message = await eventually(() => received(reader)[0], 'first message');
  const listUnsub = parseMessage(message.raw).headers['list-unsubscribe']!;
  const unsubUrl = /^<([^>]+)>/.exec(listUnsub)![1]!;
  expect(unsubUrl.startsWith(`${trackingBase}/u/`)).toBe(true);
  await request(trackingBase)
    .post(unsubUrl.slice(trackingBase.length))
    .type('form')
    .send('List-Unsubscribe=One-Click')
    .expect(200);

  const entry = await suppressionOf('READER+news@example.com').expect(200);
  expect(entry.body.data).toEqual({
    email: 'reader+news@example.com',
    reason: 'unsubscribe',
    ref_id: first,
    created_at: expect.any(String),
  });
  const listed = await request(gateway).get('/v1/suppressions?reason=unsubscribe').set(auth).expect(200);
  expect(listed.body.data.map((e: { email: string }) => e.email)).toEqual(['reader+news@example.com']);

  const blocked = await send(reader);
  expect(await outcomeOf(blocked)).toMatchObject({
    status: 'FAILED',
    failure_reason: 'recipient unsubscribed',
  });

  const removed = await request(gateway)
    .delete(`/v1/suppressions/${encodeURIComponent('reader+NEWS@example.com')}`)
    .set(auth)
    .expect(200);
  expect(removed.body).toEqual({
    success: true,
    message: 'reader+news@example.com removed from the suppression list',
  });
  await suppressionOf(reader).expect(404);

  const again = await send(reader);
  const log = await outcomeOf(again);
  expect(log).toMatchObject({ status: 'MAIL_DELIVERED', failure_reason: '' });
  expect(log.delivered_at).not.toBeNull();
  await eventually(() => received(reader).length === 2, 'second message delivered');
});

it('an address added through POST /v1/suppressions is skipped at send until it is removed', async () => {
  const who = 'imported@example.com';
  const added = await request(gateway)
    .post('/v1/suppressions')
    .set(auth)
    .send({ emails: ['IMPORTED@example.com', 'other@example.com'] })
    .expect(200);
  expect(added.body).toEqual({ success: true, added: 2, existing: 0 });
  expect((await suppressionOf(who).expect(200)).body.data).toMatchObject({ reason: 'manual', ref_id: null });

  const blocked = await send(who);
  expect(await outcomeOf(blocked)).toMatchObject({
    status: 'FAILED',
    failure_reason: 'recipient unsubscribed',
  });
  expect(received(who)).toHaveLength(0);

  await request(gateway)
    .delete(`/v1/suppressions/${encodeURIComponent(who)}`)
    .set(auth)
    .expect(200);
  const delivered = await send(who);
  expect(await outcomeOf(delivered)).toMatchObject({ status: 'MAIL_DELIVERED', failure_reason: '' });
  await eventually(() => received(who).length === 1, 'message delivered');
});
