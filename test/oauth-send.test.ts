/**
 * Sending through OAuth mailers end to end, on the real PostgreSQL, RabbitMQ and Redis: the
 * gateway's HTTP API (OAuth app, login -> consent -> callback or a refresh `token`, send), the send
 * service delivering through the Gmail API / Microsoft Graph stand-ins with tokens it obtains and
 * refreshes from the Google / Microsoft OAuth stand-ins itself (the API stand-ins accept exactly
 * the access tokens those issued), the webhook dispatcher delivering the events to a receiver.
 *
 * - Gmail: the message in the mailbox (headers byte-checked, Bcc delivered, Gmail's Message-ID,
 *   no DKIM), MAIL_DELIVERED with Gmail's message id and thread id; a reply with Thread-Id,
 *   In-Reply-To and References joins the thread.
 * - Graph: the message sent (login with a refresh token), MAIL_DELIVERED with the message's
 *   internetMessageId and conversationId.
 * - An access token that expired, and one the provider ended early: refreshed, delivered at once.
 * - 429 with Retry-After: retried not before the provider's wait, then delivered.
 * - A disabled mailer: the copy ends with a final SMTP_ERROR, nothing sent.
 * - The provider refuses the account (403): final SMTP_ERROR, MAILER_DEACTIVATED
 *   (provider_auth_error) once on the smtp_imap mailer's own webhook; later sends refused.
 * - Consent revoked at the provider: final SMTP_ERROR, MAILER_DEACTIVATED (oauth_revoked) once
 *   on the tenant's EMAIL_EVENT webhook as a one-element array; later sends refused; signing in
 *   again re-activates it without an event and it sends again.
 */
import { RoutingKey } from '@mailyard/contracts';
import type { RunningService, ServiceContext } from '@mailyard/platform';
import { start as startSend } from '@mailyard/send';
import { eventually } from '@mailyard/testkit/eventually';
import { messageHeaders } from '@mailyard/testkit/peers/api-stand-in';
import type { GmailStandIn } from '@mailyard/testkit/peers/gmail-api';
import type { GoogleOAuthStandIn } from '@mailyard/testkit/peers/google-oauth';
import type { GraphStandIn } from '@mailyard/testkit/peers/graph-api';
import type { MicrosoftIdentityStandIn } from '@mailyard/testkit/peers/microsoft-identity';
import type { WebhookReceiver } from '@mailyard/testkit/peers/webhook-receiver';
import request from 'supertest';
import { type OAuthStack, mailerConnector, startOAuthStack } from './support/oauth';

jest.setTimeout(180_000);

const GMAIL_ACCOUNT = 'owner@gmail.test';
const OUTLOOK_ACCOUNT = 'owner@contoso.test';

let stack: OAuthStack;
let google: GoogleOAuthStandIn;
let microsoft: MicrosoftIdentityStandIn;
let gmail: GmailStandIn;
let graph: GraphStandIn;
let receiver: WebhookReceiver;
let ctx: ServiceContext;
let sendCtx: ServiceContext;
let send: RunningService | undefined;
let app: OAuthStack['app'];
let key: string;
let googleApp: string;
let msApp: string;

const bearer = () => ({ Authorization: `Bearer ${key}` });

beforeAll(async () => {
  stack = await startOAuthStack({
    tenant: 'oauth-send',
    events: { delivery: true, smtp_error: true },
    google: { account: GMAIL_ACCOUNT },
    // The API stand-ins accept exactly the live tokens the OAuth stand-ins issued for the account.
    sendApis: { gmail: GMAIL_ACCOUNT, outlook: OUTLOOK_ACCOUNT },
    env: async () => ({
      OUTBOX_POLL_MS: '50',
      // Published outbox rows are kept (marked sent), so deactivationRows() counts every event written.
      OUTBOX_RETENTION_MS: '3600000',
      SERVICE_DOMAIN: 'mailyard.test',
      SEND_RETRY_DELAYS: '1,1,1,1',
    }),
  });
  ({ google, microsoft, receiver, ctx, app, key, googleApp, msApp } = stack);
  ({ gmail, graph } = stack.sendApis!);
  // The send service runs in its own context, as its own process would.
  sendCtx = await stack.openOwnContext('oauth-send-test-send');
  send = await startSend(sendCtx);
});

afterAll(async () => {
  await send?.stop();
  await stack?.close();
});

/** Connects a mailer through login -> consent -> callback; returns its id. */
const connect = mailerConnector(() => ({ app, key }));

interface EventDetails {
  ref_id?: string;
  mailer_id: string;
  email?: string[];
  message_id?: string;
  thread_id?: string;
  failed_reason: string;
  provider_error?: string;
  attempt?: number;
  retry_scheduled?: boolean;
  config_type?: string;
}
interface WebhookEvent {
  event: string;
  success: boolean;
  details: EventDetails;
}

/** Every event the receiver got on `path`, batches flattened. */
const eventsAt = (path: string): WebhookEvent[] =>
  receiver.to(path).flatMap((r) => (Array.isArray(r.json) ? r.json : [r.json])) as WebhookEvent[];
const eventsOf = (refId: string) => eventsAt('/tenant').filter((e) => e.details.ref_id === refId);
const deactivationsOf = (path: string, mailerId: string) =>
  eventsAt(path).filter((e) => e.event === 'MAILER_DEACTIVATED' && e.details.mailer_id === mailerId);

async function waitFor(refId: string, event: string, what: string): Promise<WebhookEvent> {
  return eventually(() => eventsOf(refId).find((e) => e.event === event) ?? null, what);
}

/** MAILER_DEACTIVATED rows the outbox holds for the mailer (each one is one delivered event). */
async function deactivationRows(mailerId: string): Promise<number> {
  const { rows } = await ctx.db.query<{ n: string }>(
    `SELECT count(*) AS n FROM outbox WHERE routing_key = $1 AND message->'payload'->'details'->>'mailer_id' = $2`,
    [RoutingKey.mailerDeactivated, mailerId],
  );
  return Number(rows[0]!.n);
}

/** The Gmail send requests (every try) of the message with `subject`. */
const gmailSends = (subject: string) =>
  gmail.requests.filter(
    (r) => r.url.pathname.endsWith('/messages/send') && r.body.toString('latin1').includes(subject),
  );
const tokenOf = (r: { headers: { authorization?: string } }) =>
  (r.headers.authorization ?? '').replace(/^Bearer /, '');

async function sendEmail(body: Record<string, unknown>, status = 200) {
  return request(app).post('/v1/email/send').set(bearer()).send(body).expect(status);
}

describe('OAuth mailers send end to end', () => {
  let gmailMailer: string;

  it('Gmail: the message lands in the mailbox as built (Bcc delivered, Gmail Message-ID, no DKIM); MAIL_DELIVERED carries Gmail ids', async () => {
    gmailMailer = await connect(google, GMAIL_ACCOUNT, { app_id: googleApp, type: 'smtp', name: 'Support' });
    expect(gmailMailer).toMatch(/^oauth_smtp_/);
    const subject = 'Your order has shipped';
    const accepted = await sendEmail({
      from: { email: GMAIL_ACCOUNT, name: 'Support' },
      to: [{ email: 'reader@example.test', name: 'Reader' }],
      bcc: [{ email: 'audit@example.test' }],
      mailer_id: gmailMailer,
      subject,
      content: [
        { type: 'text/plain', value: 'Parcel 42 is on its way.' },
        { type: 'text/html', value: '<p>Parcel <b>42</b> is on its way.</p>' },
      ],
      replyTo: 'help@example.test',
      headers: { 'X-Order': '42' },
      custom_args: { order: '42' },
    });
    const refId: string = accepted.body.ref_id;

    const delivered = await waitFor(refId, 'MAIL_DELIVERED', 'MAIL_DELIVERED on the tenant webhook');
    const sent = gmail.sent.find((s) => s.message.headers.subject === subject)!;
    expect(sent.via).toBe('media');
    expect([...sent.recipients].sort()).toEqual(['audit@example.test', 'reader@example.test']);
    // What Gmail stored, byte-checked where the service decides.
    const h = messageHeaders(sent.message.raw);
    expect(h.from).toBe(`Support <${GMAIL_ACCOUNT}>`);
    expect(h.to).toBe('Reader <reader@example.test>');
    expect(h.cc).toBeUndefined();
    // Bcc goes to Gmail as a header (Gmail delivers to it and strips it from what recipients see).
    expect(h.bcc).toBe('audit@example.test');
    expect(h['reply-to']).toBe('help@example.test');
    expect(h['x-order']).toBe('42');
    expect(h['x-is-svc']).toBe('true');
    expect(h['thread-id']).toBeUndefined();
    // Gmail assigns its own Message-ID; API sends carry no DKIM signature of the service.
    expect(h['message-id']).toMatch(/^<CA\+.+@mail\.gmail\.com>$/);
    expect(h['dkim-signature']).toBeUndefined();
    const raw = sent.message.raw.toString('latin1');
    expect(raw).toContain('Parcel 42 is on its way.');
    expect(raw).toContain('<p>Parcel <b>42</b> is on its way.</p>');

    expect(delivered).toMatchObject({
      event: 'MAIL_DELIVERED',
      success: true,
      details: {
        ref_id: refId,
        mailer_id: gmailMailer,
        message_id: sent.message.id,
        thread_id: sent.message.threadId,
        failed_reason: '',
        custom_args: { order: '42' },
      },
    });
    expect([...delivered.details.email!].sort()).toEqual(['audit@example.test', 'reader@example.test']);
    const logs = await request(app).get('/v1/email/logs').query({ refId }).set(bearer()).expect(200);
    expect(logs.body.data.map((e: { message_id: string }) => e.message_id)).toEqual([
      sent.message.id,
      sent.message.id,
    ]);
  });

  it('Gmail: a reply with Thread-Id, In-Reply-To and References joins the thread; thread_id is the thread', async () => {
    const original = gmail.add({
      raw: `From: Ann <ann@example.test>\r\nTo: ${GMAIL_ACCOUNT}\r\nSubject: Plans for Friday\r\nMessage-ID: <plans-1@example.test>\r\n\r\nDinner?\r\n`,
    });
    const accepted = await sendEmail({
      from: { email: GMAIL_ACCOUNT },
      to: [{ email: 'ann@example.test' }],
      mailer_id: gmailMailer,
      subject: 'Re: Plans for Friday',
      content: [{ type: 'text/plain', value: 'Yes, at eight.' }],
      headers: {
        'In-Reply-To': '<plans-1@example.test>',
        References: '<plans-1@example.test>',
        'Thread-Id': original.threadId,
      },
    });
    const delivered = await waitFor(accepted.body.ref_id, 'MAIL_DELIVERED', 'the reply delivered');
    const sent = gmail.sent.find((s) => s.message.headers.subject === 'Re: Plans for Friday')!;
    // Sent with the thread id as Gmail's metadata (a multipart upload), not as a header.
    expect(sent.via).toBe('multipart');
    expect(sent.message.threadId).toBe(original.threadId);
    expect(sent.message.headers['in-reply-to']).toBe('<plans-1@example.test>');
    expect(sent.message.headers.references).toBe('<plans-1@example.test>');
    expect(sent.message.headers['thread-id']).toBeUndefined();
    expect(delivered.details).toMatchObject({ message_id: sent.message.id, thread_id: original.threadId });
    expect(sent.message.id).not.toBe(original.id);
  });

  it('Graph: a mailer connected with a refresh token sends; MAIL_DELIVERED carries internetMessageId and conversationId', async () => {
    const token = microsoft.auth.issueRefreshToken('m-client', OUTLOOK_ACCOUNT, [
      'offline_access',
      'openid',
      'email',
      'Mail.Send',
    ]);
    const login = await request(app)
      .post('/v1/oauth/login')
      .set(bearer())
      .send({ app_id: msApp, type: 'smtp', token })
      .expect(201);
    const mailerId: string = login.body.mailer_id;
    const subject = 'Quarterly report';
    const accepted = await sendEmail({
      from: { email: OUTLOOK_ACCOUNT, name: 'Finance' },
      to: [{ email: 'board@example.test' }],
      bcc: [{ email: 'archive@example.test' }],
      mailer_id: mailerId,
      subject,
      content: [{ type: 'text/html', value: '<p>Attached in spirit.</p>' }],
    });
    const refId: string = accepted.body.ref_id;
    const delivered = await waitFor(refId, 'MAIL_DELIVERED', 'Graph send delivered');
    const sent = graph.sent.find((s) => s.message.headers.subject === subject)!;
    expect([...sent.recipients].sort()).toEqual(['archive@example.test', 'board@example.test']);
    const h = messageHeaders(sent.message.raw);
    expect(h.from).toBe(`Finance <${OUTLOOK_ACCOUNT}>`);
    expect(h.to).toBe('board@example.test');
    expect(h.bcc).toBe('archive@example.test');
    expect(h['dkim-signature']).toBeUndefined();
    // Graph keeps the service's Message-ID: it is the internetMessageId reported.
    expect(h['message-id']).toBe(`<svc_mailer_${refId}.1@mailyard.test>`);
    expect(sent.message.folder).toBe('sentitems');
    expect(delivered.details).toMatchObject({
      mailer_id: mailerId,
      message_id: `<svc_mailer_${refId}.1@mailyard.test>`,
      thread_id: sent.message.conversationId,
    });
    expect(delivered.details.thread_id).not.toBe('');
  });

  it('429 with Retry-After: SMTP_ERROR with a retry, the next attempt not before the provider asked, then delivered', async () => {
    const subject = 'Rate limited hello';
    gmail.fail({
      status: 429,
      retryAfter: '12',
      body: gmail.error(429, 'rateLimitExceeded', 'Too many concurrent requests for user.'),
      match: (r) => r.method === 'POST' && r.url.pathname.endsWith('/messages/send'),
    });
    const accepted = await sendEmail({
      from: { email: GMAIL_ACCOUNT },
      to: [{ email: 'patient@example.test' }],
      mailer_id: gmailMailer,
      subject,
      content: [{ type: 'text/plain', value: 'eventually' }],
    });
    const refId: string = accepted.body.ref_id;
    const error = await waitFor(refId, 'SMTP_ERROR', 'the throttled attempt');
    expect(error.details).toMatchObject({
      attempt: 1,
      retry_scheduled: true,
      failed_reason: 'Temporary failure: Gmail API is rate limiting the mailer (retry after 12 s)',
      message_id: '',
    });
    const delivered = await waitFor(refId, 'MAIL_DELIVERED', 'delivered on the retry');
    const tries = gmailSends(subject);
    expect(tries).toHaveLength(2);
    // SEND_RETRY_DELAYS says 1 s; the provider said 12 s.
    expect(tries[1]!.at - tries[0]!.at).toBeGreaterThanOrEqual(12_000);
    expect(delivered.details.message_id).toBe(
      gmail.sent.find((s) => s.message.headers.subject === subject)!.message.id,
    );
  });

  it('an access token that expired, and one the provider ended early, are refreshed: delivered in the first attempt', async () => {
    // Tokens of this consent live one second: the stored one has expired when the send runs.
    google.auth.accessTtlSeconds = 1;
    const mailerId = await connect(google, GMAIL_ACCOUNT, { app_id: googleApp, type: 'smtp' });
    google.auth.accessTtlSeconds = 3599;
    const { rows } = await ctx.db.query<{ access_expires_at: Date }>(
      'SELECT access_expires_at FROM oauth_grants WHERE mailer_id = $1',
      [mailerId],
    );
    await eventually(() => Date.now() > rows[0]!.access_expires_at.getTime(), 'the stored token expired');
    const refreshes = google.auth.count('refresh_token');
    const first = await sendEmail({
      from: { email: GMAIL_ACCOUNT },
      to: [{ email: 'one@example.test' }],
      mailer_id: mailerId,
      subject: 'After expiry',
      content: [{ type: 'text/plain', value: 'still here' }],
    });
    const delivered = await waitFor(first.body.ref_id, 'MAIL_DELIVERED', 'delivered after expiry');
    expect(google.auth.count('refresh_token')).toBe(refreshes + 1);
    // Refreshed before asking Gmail: one request, with the new (live) token.
    const tries = gmailSends('After expiry');
    expect(tries).toHaveLength(1);
    expect(google.auth.accessTokenInfo(tokenOf(tries[0]!))).not.toBeNull();
    expect(delivered.details.message_id).toBe(gmail.sent.at(-1)!.message.id);

    // The provider ends the account's tokens before their stored expiry: the send's 401 makes the
    // service refresh (the token source is told which token was refused) and repeat at once.
    google.auth.expireAccessTokens(GMAIL_ACCOUNT);
    const second = await sendEmail({
      from: { email: GMAIL_ACCOUNT },
      to: [{ email: 'two@example.test' }],
      mailer_id: mailerId,
      subject: 'After early expiry',
      content: [{ type: 'text/plain', value: 'still here' }],
    });
    await waitFor(second.body.ref_id, 'MAIL_DELIVERED', 'delivered after early expiry');
    expect(google.auth.count('refresh_token')).toBe(refreshes + 2);
    // The refused try with the ended token, then the repeat with the refreshed one.
    const [refused, repeated] = gmailSends('After early expiry');
    expect(gmailSends('After early expiry')).toHaveLength(2);
    expect(tokenOf(refused!)).toBe(tokenOf(tries[0]!));
    expect(google.auth.accessTokenInfo(tokenOf(refused!))).toBeNull();
    expect(google.auth.accessTokenInfo(tokenOf(repeated!))).not.toBeNull();
    expect(eventsOf(second.body.ref_id).map((e) => e.event)).toEqual(['MAIL_DELIVERED']);
    expect((await request(app).get(`/v1/mailer/${mailerId}`).set(bearer())).body.data.state).toBe('active');
  });

  it('a copy accepted before its mailer was disabled ends with a final SMTP_ERROR and is not sent', async () => {
    await send!.stop();
    send = undefined;
    const accepted = await sendEmail({
      from: { email: GMAIL_ACCOUNT },
      to: [{ email: 'late@example.test' }],
      mailer_id: gmailMailer,
      subject: 'Accepted, then disabled',
      content: [{ type: 'text/plain', value: 'never sent' }],
    });
    await request(app)
      .post('/v1/oauth/activate')
      .set(bearer())
      .send({ mailer_id: gmailMailer, active: false })
      .expect(200);
    const requestsBefore = gmail.requests.length;
    send = await startSend(sendCtx);
    const error = await waitFor(accepted.body.ref_id, 'SMTP_ERROR', 'the mailer-config load failure');
    expect(error.details).toMatchObject({
      email: ['late@example.test'],
      attempt: 1,
      retry_scheduled: false,
      failed_reason: 'Mailer is disabled',
      message_id: '',
      thread_id: '',
    });
    expect(gmail.requests.length).toBe(requestsBefore);
    // A manual switch: no event. Enabled again, it sends.
    expect(await deactivationRows(gmailMailer)).toBe(0);
    await request(app).post('/v1/oauth/activate').set(bearer()).send({ mailer_id: gmailMailer }).expect(200);
  });

  it('the provider refuses the account (403): final SMTP_ERROR, MAILER_DEACTIVATED (provider_auth_error) once on the mailer webhook; later sends refused', async () => {
    const mailerId = await connect(microsoft, OUTLOOK_ACCOUNT, { app_id: msApp, type: 'smtp_imap' });
    expect(mailerId).toMatch(/^oauth_smtp_imap_/);
    await request(app)
      .put('/v1/mailer/imap')
      .set(bearer())
      .send({ mailer_id: mailerId, webhook: { url: receiver.url('/outlook-own'), method: 'POST' } })
      .expect(200);
    graph.fail({
      status: 403,
      body: graph.error('ErrorAccessDenied', 'Access is denied. Check credentials and try again.'),
      match: (r) => r.method === 'POST' && r.url.pathname === '/v1.0/me/messages',
    });
    const accepted = await sendEmail({
      from: { email: OUTLOOK_ACCOUNT },
      to: [{ email: 'a@example.test' }, { email: 'b@example.test' }],
      mailer_id: mailerId,
      subject: 'Refused',
      content: [{ type: 'text/plain', value: 'no' }],
    });
    const error = await waitFor(accepted.body.ref_id, 'SMTP_ERROR', 'the refused attempt');
    expect(error.details).toMatchObject({
      attempt: 1,
      retry_scheduled: false,
      failed_reason:
        "Authentication failed: Microsoft Graph refused the mailer's access (403); the mailer was deactivated, sign in again with the mail scopes to reactivate it",
    });
    expect([...error.details.email!].sort()).toEqual(['a@example.test', 'b@example.test']);
    expect(error.details.provider_error).toContain('Access is denied');
    const deactivated = await eventually(
      () => deactivationsOf('/outlook-own', mailerId)[0] ?? null,
      'MAILER_DEACTIVATED on the mailer webhook',
    );
    // IMAP-capable: a single object on the mailer's own webhook, nothing on the tenant's.
    expect(receiver.to('/outlook-own').find((r) => JSON.stringify(r.json).includes(mailerId))!.json).toEqual({
      event: 'MAILER_DEACTIVATED',
      success: false,
      details: {
        mailer_id: mailerId,
        config_type: 'smtp_imap',
        failed_reason: 'provider_auth_error',
        provider_error: expect.stringContaining('Access is denied'),
      },
    });
    expect(deactivated.details.failed_reason).toBe('provider_auth_error');
    expect(deactivationsOf('/tenant', mailerId)).toEqual([]);
    const view = await request(app).get(`/v1/mailer/${mailerId}`).set(bearer()).expect(200);
    expect(view.body.data).toMatchObject({ state: 'deactivated', state_reason: 'provider_auth_error' });
    const refused = await sendEmail(
      {
        from: { email: OUTLOOK_ACCOUNT },
        to: [{ email: 'a@example.test' }],
        mailer_id: mailerId,
        subject: 'Refused again',
        content: [{ type: 'text/plain', value: 'no' }],
      },
      422,
    );
    expect(refused.body).toMatchObject({ success: false, error: 'Mailer is deactivated' });
    expect(await deactivationRows(mailerId)).toBe(1);
    expect(deactivationsOf('/outlook-own', mailerId)).toHaveLength(1);
  });

  it('consent revoked at the provider: final SMTP_ERROR, MAILER_DEACTIVATED (oauth_revoked) once on the tenant webhook; re-authentication sends again', async () => {
    const subject = 'After revocation';
    google.auth.revoke(GMAIL_ACCOUNT);
    const accepted = await sendEmail({
      from: { email: GMAIL_ACCOUNT },
      to: [{ email: 'x@example.test' }],
      cc: [{ email: 'y@example.test' }],
      mailer_id: gmailMailer,
      subject,
      content: [{ type: 'text/plain', value: 'gone' }],
    });
    const refId: string = accepted.body.ref_id;
    const error = await waitFor(refId, 'SMTP_ERROR', 'the revoked attempt');
    expect(error.details).toMatchObject({
      attempt: 1,
      retry_scheduled: false,
      failed_reason:
        'Authentication failed: the OAuth grant of the mailer was revoked or has expired; the mailer was deactivated, sign in again (POST /v1/oauth/login with its mailer_id) to reactivate it',
      provider_error: 'invalid_grant: Token has been expired or revoked.',
      message_id: '',
    });
    expect([...error.details.email!].sort()).toEqual(['x@example.test', 'y@example.test']);
    await eventually(() => deactivationsOf('/tenant', gmailMailer)[0] ?? null, 'MAILER_DEACTIVATED');
    // Send-only: on the tenant's EMAIL_EVENT webhook, in its array body (alone it is a one-element
    // array; the dispatcher may batch it with the send's SMTP_ERROR, route-event.ts).
    const batch = receiver
      .to('/tenant')
      .map((r) => r.json as WebhookEvent[])
      .find((events) => events.some((e) => e.event === 'MAILER_DEACTIVATED'))!;
    expect(Array.isArray(batch)).toBe(true);
    expect(batch.filter((e) => e.event === 'MAILER_DEACTIVATED')).toEqual([
      {
        event: 'MAILER_DEACTIVATED',
        success: false,
        details: {
          mailer_id: gmailMailer,
          config_type: 'oauth_smtp',
          failed_reason: 'oauth_revoked',
          provider_error: 'invalid_grant: Token has been expired or revoked.',
        },
      },
    ]);
    const refused = await sendEmail(
      {
        from: { email: GMAIL_ACCOUNT },
        to: [{ email: 'x@example.test' }],
        mailer_id: gmailMailer,
        subject: 'Refused',
        content: [{ type: 'text/plain', value: 'no' }],
      },
      422,
    );
    expect(refused.body.error).toBe('Mailer is deactivated');

    // Signing in again re-activates the mailer (no event) and it sends.
    await connect(google, GMAIL_ACCOUNT, { app_id: googleApp, mailer_id: gmailMailer }, 200);
    const again = await sendEmail({
      from: { email: GMAIL_ACCOUNT },
      to: [{ email: 'x@example.test' }],
      mailer_id: gmailMailer,
      subject: 'Back again',
      content: [{ type: 'text/plain', value: 'hello again' }],
    });
    await waitFor(again.body.ref_id, 'MAIL_DELIVERED', 'delivered after re-authentication');
    // The revoked send had one attempt only (one refused request), and there was one event.
    expect(eventsOf(refId).map((e) => [e.event, e.details.attempt])).toEqual([['SMTP_ERROR', 1]]);
    expect(gmailSends(subject)).toHaveLength(1);
    expect(await deactivationRows(gmailMailer)).toBe(1);
    expect(deactivationsOf('/tenant', gmailMailer)).toHaveLength(1);
  });
});
