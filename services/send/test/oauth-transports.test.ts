/**
 * The Gmail API and Microsoft Graph send transports against the provider stand-ins (TLS, real
 * googleapis / fetch clients), with messages built by the send service's own builder the way the
 * consumer builds them for providers that deliver to the headers.
 */
import type { CopyRecipient } from '@mailyard/contracts';
import { OAuthRevokedError } from '@mailyard/providers';
import { AUTH_REASON_PREFIX } from '@mailyard/providers';
import type { RecipientResult } from '@mailyard/providers';
import { grantTokenSource } from '@mailyard/testkit/peers/api-stand-in';
import { type GmailStandIn, startGmailApi } from '@mailyard/testkit/peers/gmail-api';
import { type GraphStandIn, startGraphApi } from '@mailyard/testkit/peers/graph-api';
import { buildMessage } from '../src/mime';
import { GmailTransport } from '../src/transports/gmail-transport';
import { GraphTransport } from '../src/transports/graph-transport';
import { headerRecipientsFor } from '../src/transports/header-recipients';

const planned: CopyRecipient[] = [
  { email: 'ann@example.test', name: 'Ann', type: 'to' },
  { email: 'bob@example.test', type: 'cc' },
  { email: 'hidden@example.test', type: 'bcc' },
];
const everyone = planned.map((r) => r.email);

/** The copy as the consumer builds it for `deliverTo` (headers name only those recipients). */
async function built(
  from: string,
  deliverTo: string[],
  headers: Record<string, string> = {},
  subject = 'Plans',
) {
  return buildMessage({
    request: { from: { email: from }, headers },
    recipients: headerRecipientsFor(planned, deliverTo),
    rendered: { subject, text: 'See you there.' },
    copyId: '01JABCDEFGHJKMNPQRSTVWXYZ0.1',
    serviceDomain: 'mailyard.test',
  });
}

const failures = (results: RecipientResult[]) => results.map((r) => (r.ok ? null : r.failure));

describe('GmailTransport', () => {
  let gmail: GmailStandIn;
  let tokens: ReturnType<typeof grantTokenSource>;
  const transport = (policy = {}) =>
    new GmailTransport({ id: 'oauth_smtp_1' }, tokens.source, {
      apiUrl: gmail.url,
      policy: { baseDelayMs: 10, ...policy },
    });

  beforeEach(async () => {
    gmail = await startGmailApi({ email: 'owner@gmail.test' });
    tokens = grantTokenSource(
      gmail.grant,
      () => new OAuthRevokedError('invalid_grant: Token has been expired or revoked.'),
    );
  });
  afterEach(async () => {
    await gmail.close();
  });

  it('sends into the Thread-Id thread, to every recipient (bcc included), reporting Gmail ids', async () => {
    const first = gmail.add({
      raw: 'From: ann@example.test\r\nTo: owner@gmail.test\r\nSubject: Plans\r\nMessage-ID: <p1@example.test>\r\n\r\nhi\r\n',
    });
    const msg = await built(
      'owner@gmail.test',
      everyone,
      { 'In-Reply-To': '<p1@example.test>', References: '<p1@example.test>' },
      'Re: Plans',
    );
    const results = await transport().deliver({ from: 'owner@gmail.test', to: everyone }, msg.raw, {
      threadId: first.threadId,
    });
    const sent = gmail.sent[0]!;
    expect(results).toEqual(
      everyone.map((email) => ({
        email,
        ok: true,
        response: expect.stringContaining(sent.message.id),
        messageId: sent.message.id,
        threadId: first.threadId,
      })),
    );
    expect(sent.recipients.sort()).toEqual([...everyone].sort());
    expect(sent.message.headers.to).toContain('ann@example.test');
    expect(sent.message.headers.cc).toBe('bob@example.test');
    expect(sent.message.headers.bcc).toBe('hidden@example.test');
    // Gmail replaced the service's Message-ID with its own.
    expect(sent.message.headers['message-id']).not.toBe(msg.messageId);
  });

  it('sends a retried copy only to the recipients still pending', async () => {
    const msg = await built('owner@gmail.test', ['bob@example.test']);
    const results = await transport().deliver(
      { from: 'owner@gmail.test', to: ['bob@example.test'] },
      msg.raw,
    );
    expect(results.every((r) => r.ok)).toBe(true);
    expect(gmail.sent[0]!.recipients).toEqual(['bob@example.test']);
    expect(gmail.sent[0]!.message.headers.to).toBeUndefined();
  });

  it('refuses, without sending, a message whose headers name recipients outside the delivery', async () => {
    const msg = await built('owner@gmail.test', everyone);
    const results = await transport().deliver(
      { from: 'owner@gmail.test', to: ['ann@example.test'] },
      msg.raw,
    );
    expect(failures(results)).toEqual([
      {
        kind: 'permanent',
        failedReason: 'The message names recipients outside this delivery',
        providerError: 'bob@example.test',
      },
    ]);
    expect(gmail.requests).toHaveLength(0);
  });

  it('reports throttling beyond the in-process wait as a temporary failure (the retry path)', async () => {
    gmail.fail({
      status: 429,
      retryAfter: '120',
      body: gmail.error(429, 'rateLimitExceeded', 'Too many concurrent requests for user'),
    });
    const msg = await built('owner@gmail.test', ['ann@example.test']);
    const [r] = await transport().deliver({ from: 'owner@gmail.test', to: ['ann@example.test'] }, msg.raw);
    expect(r).toMatchObject({
      ok: false,
      failure: {
        kind: 'temporary',
        failedReason: 'Temporary failure: Gmail API is rate limiting the mailer (retry after 120 s)',
        providerError: expect.stringContaining('Too many concurrent requests'),
      },
    });
    expect(gmail.sent).toHaveLength(0);
  });

  it('refreshes a refused token and sends; a revoked grant is a final authentication failure', async () => {
    gmail.grant.expire();
    const msg = await built('owner@gmail.test', ['ann@example.test']);
    const ok = await transport().deliver({ from: 'owner@gmail.test', to: ['ann@example.test'] }, msg.raw);
    expect(ok[0]!.ok).toBe(true);

    gmail.grant.revoke();
    const [r] = await transport().deliver({ from: 'owner@gmail.test', to: ['ann@example.test'] }, msg.raw);
    if (r!.ok) throw new Error('expected a failure');
    expect(r!.failure).toMatchObject({ kind: 'auth', deactivation: 'oauth_revoked' });
    expect(r!.failure.failedReason.startsWith(AUTH_REASON_PREFIX)).toBe(true);
    expect(gmail.sent).toHaveLength(1);
  });

  it('names a Thread-Id Gmail does not know in the failure', async () => {
    const msg = await built('owner@gmail.test', ['ann@example.test']);
    const [r] = await transport().deliver({ from: 'owner@gmail.test', to: ['ann@example.test'] }, msg.raw, {
      threadId: '18cfffff',
    });
    expect(r).toMatchObject({
      ok: false,
      failure: { kind: 'permanent', failedReason: 'Gmail thread 18cfffff (Thread-Id) was not found' },
    });
  });
});

describe('GraphTransport', () => {
  let graph: GraphStandIn;
  let tokens: ReturnType<typeof grantTokenSource>;
  const transport = (policy = {}) =>
    new GraphTransport({ id: 'oauth_smtp_2' }, tokens.source, {
      graphUrl: graph.url,
      policy: { baseDelayMs: 10, ...policy },
    });

  beforeEach(async () => {
    graph = await startGraphApi({ email: 'owner@outlook.test' });
    tokens = grantTokenSource(graph.grant, () => new OAuthRevokedError('invalid_grant: AADSTS700082'));
  });
  afterEach(async () => {
    await graph.close();
  });

  it("sends with the service's Message-ID kept, to every recipient, reporting it and the conversation", async () => {
    const original = graph.add({
      raw: 'From: ann@example.test\r\nTo: owner@outlook.test\r\nSubject: Plans\r\nMessage-ID: <p1@example.test>\r\n\r\nhi\r\n',
    });
    const msg = await built(
      'owner@outlook.test',
      everyone,
      { 'In-Reply-To': '<p1@example.test>' },
      'Re: Plans',
    );
    const results = await transport().deliver({ from: 'owner@outlook.test', to: everyone }, msg.raw);
    expect(results.map((r) => r.ok && { messageId: r.messageId, threadId: r.threadId })).toEqual(
      everyone.map(() => ({ messageId: msg.messageId, threadId: original.conversationId })),
    );
    expect(graph.sent[0]!.recipients.sort()).toEqual([...everyone].sort());
  });

  it('makes a 403 for the account a final authentication failure (provider_auth_error)', async () => {
    graph.fail({
      status: 403,
      body: graph.error('ErrorAccessDenied', 'Access is denied. Check credentials and try again.'),
    });
    const msg = await built('owner@outlook.test', ['ann@example.test']);
    const [r] = await transport().deliver({ from: 'owner@outlook.test', to: ['ann@example.test'] }, msg.raw);
    expect(r).toMatchObject({ ok: false, failure: { kind: 'auth', deactivation: 'provider_auth_error' } });
  });

  it('retries 503 with Retry-After, then reports a temporary failure when it persists', async () => {
    graph.fail({ status: 503, retryAfter: '1', body: graph.error('ServiceUnavailable', 'busy') });
    const msg = await built('owner@outlook.test', ['ann@example.test']);
    const ok = await transport().deliver({ from: 'owner@outlook.test', to: ['ann@example.test'] }, msg.raw);
    expect(ok[0]!.ok).toBe(true);
    const creates = graph.requests.filter(
      (q) => q.method === 'POST' && q.url.pathname === '/v1.0/me/messages',
    );
    expect(creates[1]!.at - creates[0]!.at).toBeGreaterThanOrEqual(1000);

    graph.fail({ status: 503, times: 10, body: graph.error('ServiceUnavailable', 'busy') });
    const [r] = await transport({ maxAttempts: 2 }).deliver(
      { from: 'owner@outlook.test', to: ['ann@example.test'] },
      msg.raw,
    );
    expect(r).toMatchObject({
      ok: false,
      failure: { kind: 'temporary', failedReason: 'Temporary failure: Microsoft Graph is unavailable' },
    });
  });

  it('makes a From the account may not use a permanent failure', async () => {
    const msg = await built('ceo@elsewhere.test', ['ann@example.test']);
    const [r] = await transport().deliver({ from: 'ceo@elsewhere.test', to: ['ann@example.test'] }, msg.raw);
    expect(r).toMatchObject({
      ok: false,
      failure: { kind: 'permanent', failedReason: 'The mailer may not send as the message From address' },
    });
  });
});
