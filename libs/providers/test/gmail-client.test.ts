/**
 * The Gmail API client (real googleapis) against the Gmail API stand-in over TLS: sending with
 * threading, listing with paging and windows, raw fetch, history, labels, and the retry policy
 * (Retry-After, 401 then refresh, revoked grant).
 */
import { type SimpleMessage, simpleMessage } from '@mailyard/testkit/mime';
import { grantTokenSource } from '@mailyard/testkit/peers/api-stand-in';
import { type GmailStandIn, startGmailApi } from '@mailyard/testkit/peers/gmail-api';
import {
  GmailClient,
  type GmailClientOptions,
  OAuthRevokedError,
  ProviderAuthError,
  ProviderRequestError,
  ProviderThrottledError,
  inGmailWindow,
} from '../src';

const DAY = 86_400_000;

/** Every message gets a Message-ID unless the test names one. */
const mime = (o: SimpleMessage) =>
  simpleMessage({ id: `<${Math.random().toString(36).slice(2)}@example.test>`, ...o });

describe('GmailClient against the Gmail API stand-in', () => {
  let gmail: GmailStandIn;
  let tokens: ReturnType<typeof grantTokenSource>;
  const client = (o: Partial<GmailClientOptions> = {}) =>
    new GmailClient(tokens.source, { apiUrl: gmail.url, policy: { baseDelayMs: 10 }, ...o });
  const requestsTo = (suffix: string) => gmail.requests.filter((r) => r.url.pathname.endsWith(suffix));

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

  it('reads the profile over TLS with the bearer token', async () => {
    const p = await client().profile();
    expect(p).toEqual({
      emailAddress: 'owner@gmail.test',
      historyId: String(gmail.historyId()),
      messagesTotal: 0,
    });
    expect(gmail.requests[0]!.headers.authorization).toBe(`Bearer ${gmail.grant.token}`);
  });

  it('sends raw MIME, into the thread when the reply qualifies, and Gmail assigns the Message-ID', async () => {
    const first = gmail.add({
      raw: mime({
        from: 'ann@example.test',
        to: 'owner@gmail.test',
        subject: 'Plans',
        id: '<plans-1@example.test>',
      }),
    });
    const reply = mime({
      from: 'owner@gmail.test',
      to: 'ann@example.test',
      subject: 'Re: Plans',
      id: '<svc_mailer_abc@mailyard.test>',
      extra: 'In-Reply-To: <plans-1@example.test>\r\nReferences: <plans-1@example.test>',
      body: 'sounds good',
    });
    const sent = await client().send(Buffer.from(reply), { threadId: first.threadId });
    expect(sent.threadId).toBe(first.threadId);
    expect(sent.id).not.toBe(first.id);
    expect(sent.labelIds).toEqual(['SENT']);
    const record = gmail.sent.find((s) => s.message.id === sent.id)!;
    expect(record.via).toBe('multipart');
    expect(record.recipients).toEqual(['ann@example.test']);
    expect(record.message.headers['message-id']).toMatch(/@mail\.gmail\.com>$/);
    expect(record.message.raw.toString()).toContain('\r\n\r\nsounds good\r\n');

    // Without reply headers Gmail starts a new thread even when a threadId is given.
    const loose = await client().send(
      Buffer.from(mime({ from: 'owner@gmail.test', to: 'ann@example.test', subject: 'Plans' })),
      { threadId: first.threadId },
    );
    expect(loose.threadId).toBe(loose.id);

    // No threadId: a plain media upload, a thread of its own.
    const plain = await client().send(
      Buffer.from(mime({ from: 'owner@gmail.test', to: 'bob@example.test', subject: 'Hi' })),
    );
    expect(plain.threadId).toBe(plain.id);
    expect(gmail.sent.at(-1)!.via).toBe('media');
  });

  it('refuses an unknown thread with a permanent request error', async () => {
    const err = await client()
      .send(Buffer.from(mime({ from: 'owner@gmail.test', to: 'a@example.test', subject: 'x' })), {
        threadId: 'ffff',
      })
      .catch((e) => e);
    expect(err).toBeInstanceOf(ProviderRequestError);
    expect(err.status).toBe(404);
  });

  it('lists every page, newest first, and keeps the exact window by internalDate', async () => {
    const base = Date.parse('2024-05-01T00:00:00Z');
    for (let i = 0; i < 25; i++)
      gmail.add({
        raw: mime({ from: `s${i}@example.test`, to: 'owner@gmail.test', subject: `m${i}` }),
        internalDate: new Date(base + i * DAY),
      });
    const all = await client({ pageSize: 10 }).listAllMessages({ labelId: 'INBOX' });
    expect(all).toHaveLength(25);
    expect(requestsTo('/messages')).toHaveLength(3);
    const dates = await Promise.all(
      all.map(async (m) => (await client().getRaw(m.id)).internalDate.getTime()),
    );
    expect(dates).toEqual([...dates].sort((a, b) => b - a));

    // Bounds: since and until themselves are in, one second outside is out.
    const since = new Date(base + 3 * DAY);
    const until = new Date(base + 5 * DAY);
    gmail.add({
      raw: mime({ from: 'edge@example.test', to: 'owner@gmail.test', subject: 'before' }),
      internalDate: new Date(since.getTime() - 1000),
    });
    gmail.add({
      raw: mime({ from: 'edge@example.test', to: 'owner@gmail.test', subject: 'after' }),
      internalDate: new Date(until.getTime() + 1000),
    });
    const listed = await client().listAllMessages({ since, until, labelId: 'INBOX' });
    const inside: string[] = [];
    for (const m of listed) {
      const raw = await client().getRaw(m.id);
      if (inGmailWindow(raw.internalDate, { since, until }))
        inside.push(raw.raw.toString().match(/Subject: (\S+)/)![1]!);
    }
    expect(inside.sort()).toEqual(['m3', 'm4', 'm5']);
  });

  it("matches a participant in From or To (the spec's Gmail rule: no Cc), and lists spam only when asked", async () => {
    gmail.add({ raw: mime({ from: 'ann@example.test', to: 'owner@gmail.test', subject: 'from-ann' }) });
    gmail.add({
      raw: mime({ from: 'owner@gmail.test', to: 'Ann <ann@example.test>', subject: 'to-ann' }),
      labelIds: ['SENT'],
    });
    gmail.add({
      raw: mime({
        from: 'bob@example.test',
        to: 'owner@gmail.test',
        subject: 'cc-ann',
        extra: 'Cc: ann@example.test',
      }),
    });
    gmail.add({ raw: mime({ from: 'bob@example.test', to: 'owner@gmail.test', subject: 'not-ann' }) });
    gmail.add({
      raw: mime({ from: 'ann@example.test', to: 'owner@gmail.test', subject: 'spam-ann' }),
      labelIds: ['SPAM'],
    });
    const subjects = async (labelId: string) => {
      const refs = await client().listAllMessages({ participant: 'ann@example.test', labelId });
      const raws = await Promise.all(refs.map((r) => client().getRaw(r.id)));
      return raws.map((r) => r.raw.toString().match(/Subject: (\S+)/)![1]).sort();
    };
    expect(await subjects('INBOX')).toEqual(['from-ann']);
    expect(await subjects('SENT')).toEqual(['to-ann']);
    expect(await subjects('SPAM')).toEqual(['spam-ann']);
  });

  it('fetches the raw source byte for byte, with labels, thread and internalDate', async () => {
    const raw = Buffer.concat([
      Buffer.from(
        'From: ann@example.test\r\nTo: owner@gmail.test\r\nSubject: bytes\r\nContent-Type: text/plain; charset=latin1\r\nContent-Transfer-Encoding: 8bit\r\n\r\ncaf',
      ),
      Buffer.from([0xe9, 0x0d, 0x0a, 0x00, 0xff]),
      Buffer.from('\nno final CRLF'),
    ]);
    const at = new Date('2024-02-03T04:05:06Z');
    const stored = gmail.add({ raw, labelIds: ['INBOX', 'UNREAD'], internalDate: at });
    const got = await client().getRaw(stored.id);
    expect(got.raw.equals(raw)).toBe(true);
    expect(got).toMatchObject({
      id: stored.id,
      threadId: stored.threadId,
      labelIds: ['INBOX', 'UNREAD'],
      internalDate: at,
    });
  });

  it('reads labels, thread and internalDate without the body (format=minimal)', async () => {
    const at = new Date('2024-02-03T04:05:06Z');
    const stored = gmail.add({
      raw: mime({ from: 'ann@example.test', to: 'owner@gmail.test', subject: 'meta' }),
      labelIds: ['SENT'],
      internalDate: at,
    });
    expect(await client().getMeta(stored.id)).toEqual({
      id: stored.id,
      threadId: stored.threadId,
      labelIds: ['SENT'],
      internalDate: at,
      historyId: String(stored.historyId),
    });
    const req = requestsTo(`/messages/${stored.id}`)[0]!;
    expect(req.url.searchParams.get('format')).toBe('minimal');
    await expect(client().getMeta('0000000000000bad')).rejects.toMatchObject({ status: 404 });
  });

  it('reads history from a start id over every page, filtered by label, and reports an expired start id', async () => {
    const start = (await client().profile()).historyId;
    const a = gmail.add({ raw: mime({ from: 'a@example.test', to: 'owner@gmail.test', subject: 'a' }) });
    gmail.add({
      raw: mime({ from: 'owner@gmail.test', to: 'x@example.test', subject: 's' }),
      labelIds: ['SENT'],
    });
    const b = gmail.add({ raw: mime({ from: 'b@example.test', to: 'owner@gmail.test', subject: 'b' }) });
    const h = await client({ pageSize: 1 }).history(start, { labelId: 'INBOX' });
    expect(h).toEqual({
      kind: 'changes',
      added: [
        { id: a.id, threadId: a.threadId, labelIds: ['INBOX'] },
        { id: b.id, threadId: b.threadId, labelIds: ['INBOX'] },
      ],
      historyId: String(gmail.historyId()),
    });
    expect(requestsTo('/history').length).toBe(2);
    const none = await client().history(String(gmail.historyId()));
    expect(none).toEqual({ kind: 'changes', added: [], historyId: String(gmail.historyId()) });

    gmail.expireHistoryBefore(gmail.historyId());
    expect(await client().history(start)).toEqual({ kind: 'expired' });
  });

  it('maps the system labels to folder roles', async () => {
    expect(await client().folderLabels()).toEqual({
      inbox: 'INBOX',
      sent: 'SENT',
      spam: 'SPAM',
      trash: 'TRASH',
    });
  });

  it("waits out a 429's Retry-After and then succeeds", async () => {
    gmail.fail({
      status: 429,
      retryAfter: '1',
      body: gmail.error(429, 'rateLimitExceeded', 'Too many concurrent requests for user'),
    });
    await expect(client().profile()).resolves.toMatchObject({ emailAddress: 'owner@gmail.test' });
    const [first, second] = requestsTo('/profile');
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(1000);
  });

  it('retries a 403 usage limit, and gives up after the bounded tries with ProviderThrottledError', async () => {
    gmail.fail({ status: 403, body: gmail.error(403, 'userRateLimitExceeded', 'User Rate Limit Exceeded') });
    await expect(client().profile()).resolves.toBeTruthy();
    expect(requestsTo('/profile')).toHaveLength(2);

    gmail.fail({ status: 503, times: 10, body: gmail.error(503, 'backendError', 'Backend Error') });
    const err = await client({ policy: { maxAttempts: 3, baseDelayMs: 5 } })
      .profile()
      .catch((e) => e);
    expect(err).toBeInstanceOf(ProviderThrottledError);
    expect(err).toMatchObject({ status: 503, retryAfterMs: null });
    expect(requestsTo('/profile')).toHaveLength(5);
  });

  it('hands a Retry-After longer than the policy waits back to the caller at once', async () => {
    const date = new Date(Date.now() + 120_000).toUTCString();
    gmail.fail({ status: 429, retryAfter: date, body: gmail.error(429, 'rateLimitExceeded', 'slow down') });
    const err = await client()
      .profile()
      .catch((e) => e);
    expect(err).toBeInstanceOf(ProviderThrottledError);
    expect(err.retryAfterMs).toBeGreaterThan(100_000);
    expect(err.retryAfterMs).toBeLessThanOrEqual(120_000);
    expect(requestsTo('/profile')).toHaveLength(1);
  });

  it('asks the token source again after a 401 and repeats the request with the new token', async () => {
    await client().profile();
    const old = gmail.grant.token!;
    gmail.grant.expire();
    await expect(client().profile()).resolves.toBeTruthy();
    expect(tokens.asked).toContain(old);
    const last = requestsTo('/profile').slice(-2);
    expect(last.map((r) => r.headers.authorization)).toEqual([
      `Bearer ${old}`,
      `Bearer ${gmail.grant.token}`,
    ]);
  });

  it('fails with ProviderAuthError when a fresh token is refused too, without the token in the message', async () => {
    const stale = 'ya29.not-valid';
    const c = new GmailClient(async () => stale, { apiUrl: gmail.url });
    const err = await c.profile().catch((e) => e);
    expect(err).toBeInstanceOf(ProviderAuthError);
    expect(err.message).not.toContain(stale);
    expect(requestsTo('/profile')).toHaveLength(2);
  });

  it('passes OAuthRevokedError through when the grant was revoked', async () => {
    await client().profile();
    gmail.grant.revoke();
    await expect(client().profile()).rejects.toThrow(OAuthRevokedError);
  });
});
