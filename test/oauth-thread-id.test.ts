/**
 * thread_id on the events that come after a Gmail or Microsoft Graph delivery (issue 25 item 5):
 * the copy keeps the provider's thread (email_logs.thread_id, migration 0029, written with
 * MAIL_DELIVERED), and the events built later for that copy carry it, as MAIL_DELIVERED did.
 * End to end on the real PostgreSQL, RabbitMQ and Redis: a tracked send through the gateway's API,
 * the send service delivering through the Gmail API / Graph stand-ins, the pixel, a tracked link
 * and the one-click unsubscribe read back from the message the stand-in received and requested
 * from the tracking service, the events read on the tenant's EMAIL_EVENT webhook.
 */
import type { RunningService } from '@mailyard/platform';
import { start as startSend } from '@mailyard/send';
import { eventually } from '@mailyard/testkit/eventually';
import { parseMessage } from '@mailyard/testkit/mime';
import type { GmailStandIn } from '@mailyard/testkit/peers/gmail-api';
import type { GraphStandIn } from '@mailyard/testkit/peers/graph-api';
import { freePort } from '@mailyard/testkit/process';
import { start as startTracking } from '@mailyard/tracking';
import request from 'supertest';
import { type OAuthStack, mailerConnector, startOAuthStack } from './support/oauth';

jest.setTimeout(180_000);

const GMAIL_ACCOUNT = 'news@gmail.test';
const OUTLOOK_ACCOUNT = 'news@contoso.test';

let stack: OAuthStack;
let gmail: GmailStandIn;
let graph: GraphStandIn;
let send: RunningService | undefined;
let tracking: RunningService | undefined;
let trackingBase: string;

beforeAll(async () => {
  const trackingPort = await freePort();
  trackingBase = `http://127.0.0.1:${trackingPort}`;
  stack = await startOAuthStack({
    tenant: 'oauth-thread-id',
    events: { delivery: true, open: true, click: true, unsubscribe: true },
    google: { account: GMAIL_ACCOUNT },
    sendApis: { gmail: GMAIL_ACCOUNT, outlook: OUTLOOK_ACCOUNT },
    env: async () => ({
      OUTBOX_POLL_MS: '50',
      SERVICE_DOMAIN: 'mailyard.test',
      TRACKING_PORT: String(trackingPort),
      TRACKING_BASE_URL: trackingBase,
      HOST: '127.0.0.1',
    }),
  });
  ({ gmail, graph } = stack.sendApis!);
  // The send and tracking services each in a context of their own, as their own processes would.
  send = await startSend(await stack.openOwnContext('thread-id-send'));
  tracking = await startTracking(await stack.openOwnContext('thread-id-tracking'));
});

afterAll(async () => {
  await tracking?.stop();
  await send?.stop();
  await stack?.close();
});

interface WebhookEvent {
  event: string;
  details: { ref_id: string; thread_id: string; message_id: string; email: string[] };
}

const eventsOf = (refId: string): WebhookEvent[] =>
  (stack.receiver.to('/tenant').flatMap((r) => r.json) as WebhookEvent[]).filter(
    (e) => e.details.ref_id === refId,
  );
const waitFor = (refId: string, event: string) =>
  eventually(() => eventsOf(refId).find((e) => e.event === event) ?? null, `${event} of ${refId}`);

async function trackedSend(mailerId: string, from: string, subject: string, to: string): Promise<string> {
  const res = await request(stack.app)
    .post('/v1/email/send')
    .set({ Authorization: `Bearer ${stack.key}` })
    .send({
      from: { email: from },
      to: [{ email: to }],
      mailer_id: mailerId,
      subject,
      content: [{ type: 'text/html', value: '<p>Hello <a href="https://shop.example/p?a=1">shop</a></p>' }],
      settings: { open_tracking: { enable: true }, click_tracking: { enable: true } },
    })
    .expect(200);
  return res.body.ref_id;
}

/** The tracking service's path of a link the message carries. */
const path = (url: string) => {
  expect(url.startsWith(`${trackingBase}/`)).toBe(true);
  return url.slice(trackingBase.length);
};

function trackedLinks(raw: Buffer) {
  const message = parseMessage(raw);
  const html = message.parts.find((p) => p.type === 'text/html')!.text;
  return {
    pixel: /<img src="([^"]+\/o\/[^"]+)" width="1" height="1"/.exec(html)![1]!,
    click: /href="([^"]+\/c\/[^"]+)"/.exec(html)![1]!,
    unsubscribe: /^<([^>]+)>/.exec(message.headers['list-unsubscribe']!)![1]!,
  };
}

it('Gmail: MAIL_OPENED, MAIL_CLICKED and MAIL_UNSUBSCRIBED carry the thread of the delivery', async () => {
  const connect = mailerConnector(() => stack);
  const mailerId = await connect(stack.google, GMAIL_ACCOUNT, { app_id: stack.googleApp, type: 'smtp' });
  const refId = await trackedSend(mailerId, GMAIL_ACCOUNT, 'Gmail thread kept', 'reader@example.test');
  const delivered = await waitFor(refId, 'MAIL_DELIVERED');
  const sent = gmail.sent.find((s) => s.message.headers.subject === 'Gmail thread kept')!;
  expect(sent.message.threadId).not.toBe('');
  expect(delivered.details).toMatchObject({ thread_id: sent.message.threadId, message_id: sent.message.id });

  const links = trackedLinks(sent.message.raw);
  await request(trackingBase).get(path(links.pixel)).expect(200);
  await request(trackingBase).get(path(links.click)).expect(302);
  await request(trackingBase)
    .post(path(links.unsubscribe))
    .type('form')
    .send('List-Unsubscribe=One-Click')
    .expect(200);
  for (const event of ['MAIL_OPENED', 'MAIL_CLICKED', 'MAIL_UNSUBSCRIBED']) {
    const e = await waitFor(refId, event);
    expect(e.details).toMatchObject({
      thread_id: sent.message.threadId,
      message_id: sent.message.id,
      email: ['reader@example.test'],
    });
  }
});

it('Graph: MAIL_OPENED carries the conversationId of the delivery', async () => {
  const token = stack.microsoft.auth.issueRefreshToken('m-client', OUTLOOK_ACCOUNT, [
    'offline_access',
    'openid',
    'email',
    'Mail.Send',
  ]);
  const login = await request(stack.app)
    .post('/v1/oauth/login')
    .set({ Authorization: `Bearer ${stack.key}` })
    .send({ app_id: stack.msApp, type: 'smtp', token })
    .expect(201);
  const refId = await trackedSend(
    login.body.mailer_id,
    OUTLOOK_ACCOUNT,
    'Graph thread kept',
    'board@example.test',
  );
  await waitFor(refId, 'MAIL_DELIVERED');
  // Another recipient: the Gmail test's reader has unsubscribed from this tenant.
  const sent = graph.sent.find((s) => s.message.headers.subject === 'Graph thread kept')!;
  expect(sent.message.conversationId).toBeTruthy();
  await request(trackingBase)
    .get(path(trackedLinks(sent.message.raw).pixel))
    .expect(200);
  const opened = await waitFor(refId, 'MAIL_OPENED');
  expect(opened.details.thread_id).toBe(sent.message.conversationId);
});
