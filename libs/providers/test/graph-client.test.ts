/**
 * The Microsoft Graph client against the Graph stand-in over TLS: MIME send with provider ids,
 * folders, window listing with paging, participant search split over the 1000-result cap, MIME
 * fetch, delta rounds, and the retry policy (Retry-After, 401 then refresh, revoked grant, 403).
 */
import { simpleMessage } from '@mailyard/testkit/mime';
import { grantTokenSource } from '@mailyard/testkit/peers/api-stand-in';
import { type GraphStandIn, startGraphApi } from '@mailyard/testkit/peers/graph-api';
import {
  GraphClient,
  type GraphClientOptions,
  OAuthRevokedError,
  ProviderAuthError,
  ProviderRequestError,
  ProviderThrottledError,
} from '../src';

const DAY = 86_400_000;

const mime = simpleMessage;

describe('GraphClient against the Graph stand-in', () => {
  let graph: GraphStandIn;
  let tokens: ReturnType<typeof grantTokenSource>;
  const client = (o: Partial<GraphClientOptions> = {}) =>
    new GraphClient(tokens.source, { graphUrl: graph.url, policy: { baseDelayMs: 10 }, ...o });
  const requestsTo = (re: RegExp) => graph.requests.filter((r) => re.test(r.url.pathname));

  beforeEach(async () => {
    graph = await startGraphApi({ email: 'owner@outlook.test' });
    tokens = grantTokenSource(graph.grant, () => new OAuthRevokedError('invalid_grant: AADSTS70008'));
  });
  afterEach(async () => {
    await graph.close();
  });

  it('reads the account address and the well-known folders', async () => {
    expect(await client().me()).toMatchObject({ address: 'owner@outlook.test' });
    const folders = await client().wellKnownFolders();
    expect(folders.inbox?.id).toBe(graph.folderId('inbox'));
    expect(folders.sent?.id).toBe(graph.folderId('sentitems'));
    expect(folders.spam?.id).toBe(graph.folderId('junkemail'));
    expect(folders.trash?.id).toBe(graph.folderId('deleteditems'));
  });

  it('sends MIME as a draft then sends it, reporting the ids, the Message-ID kept and the reply threaded', async () => {
    const original = graph.add({
      raw: mime({
        from: 'ann@example.test',
        to: 'owner@outlook.test',
        subject: 'Plans',
        id: '<plans@example.test>',
      }),
    });
    const raw = Buffer.from(
      mime({
        from: 'owner@outlook.test',
        to: 'ann@example.test',
        subject: 'Re: Plans',
        id: '<svc_mailer_r1@mailyard.test>',
        extra:
          'Bcc: hidden@example.test\r\nIn-Reply-To: <plans@example.test>\r\nReferences: <plans@example.test>',
      }),
    );
    const sent = await client().sendMime(raw);
    expect(sent.internetMessageId).toBe('<svc_mailer_r1@mailyard.test>');
    expect(sent.conversationId).toBe(original.conversationId);
    const stored = graph.messages().find((m) => m.id === sent.id)!;
    expect(stored.folder).toBe('sentitems');
    expect(graph.sent.map((s) => s.recipients)).toEqual([['ann@example.test', 'hidden@example.test']]);

    const [create, send] = graph.requests.filter((r) => r.method === 'POST');
    expect(create!.url.pathname).toBe('/v1.0/me/messages');
    expect(create!.headers['content-type']).toBe('text/plain');
    expect(Buffer.from(create!.body.toString(), 'base64').equals(raw)).toBe(true);
    expect(create!.headers.prefer).toContain('IdType="ImmutableId"');
    expect(send!.url.pathname).toBe(`/v1.0/me/messages/${sent.id}/send`);
  });

  it('reports a From the account may not use as a request error and removes the draft', async () => {
    const err = await client()
      .sendMime(Buffer.from(mime({ from: 'ceo@elsewhere.test', to: 'ann@example.test', subject: 'x' })))
      .catch((e) => e);
    expect(err).toBeInstanceOf(ProviderRequestError);
    expect(err).toMatchObject({ status: 403, reason: 'ErrorSendAsDenied' });
    expect(graph.messages().map((m) => m.folder)).toEqual(['deleteditems']);
  });

  it('lists a folder within an exact window over every page, newest first', async () => {
    const base = Date.parse('2024-05-01T00:00:00Z');
    for (let i = 0; i < 25; i++)
      graph.add({
        raw: mime({ from: `s${i}@example.test`, to: 'owner@outlook.test', subject: `m${i}` }),
        receivedDateTime: new Date(base + i * DAY),
      });
    graph.add({
      raw: mime({ from: 'j@example.test', to: 'owner@outlook.test', subject: 'junk' }),
      folder: 'junkemail',
      receivedDateTime: new Date(base),
    });
    const since = new Date(base + 3 * DAY);
    const until = new Date(base + 22 * DAY);
    graph.add({
      raw: mime({ from: 'e@example.test', to: 'owner@outlook.test', subject: 'early' }),
      receivedDateTime: new Date(since.getTime() - 1000),
    });
    graph.add({
      raw: mime({ from: 'e@example.test', to: 'owner@outlook.test', subject: 'late' }),
      receivedDateTime: new Date(until.getTime() + 1000),
    });
    const r = await client({ pageSize: 5 }).listWindow(graph.folderId('inbox'), { since, until });
    expect(r.truncated).toBe(false);
    expect(r.messages).toHaveLength(20);
    const times = r.messages.map((m) => m.receivedAt.getTime());
    expect(times[0]).toBe(until.getTime());
    expect(times.at(-1)).toBe(since.getTime());
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect(requestsTo(/\/messages$/)).toHaveLength(4);
  });

  it('finds every message of a participant beyond the 1000-result search cap by splitting the window', async () => {
    const base = Date.parse('2024-01-01T00:00:00Z');
    for (let i = 0; i < 2500; i++) {
      const at = new Date(base + Math.floor((i * 30 * DAY) / 2500));
      const to = i % 3 === 0 ? 'Ann <ann@example.test>' : 'owner@outlook.test';
      const extra = i % 3 === 1 ? 'Cc: ann@example.test' : undefined;
      graph.add({
        raw: mime({
          from: i % 3 === 2 ? 'ann@example.test' : 'owner@outlook.test',
          to,
          subject: `n${i}`,
          ...(extra ? { extra } : {}),
        }),
        receivedDateTime: at,
      });
    }
    for (let i = 0; i < 300; i++)
      graph.add({
        raw: mime({ from: 'bob@example.test', to: 'owner@outlook.test', subject: `b${i}` }),
        receivedDateTime: new Date(base + i * 3600_000),
      });
    const since = new Date(base);
    const until = new Date(base + 30 * DAY - 1000);
    const r = await client({ pageSize: 500 }).listWindow(graph.folderId('inbox'), {
      since,
      until,
      participant: 'ann@example.test',
    });
    expect(r.truncated).toBe(false);
    expect(r.messages).toHaveLength(2500);
    expect(new Set(r.messages.map((m) => m.id)).size).toBe(2500);
    const searches = new Set(requestsTo(/\/messages$/).map((q) => q.url.searchParams.get('$search')));
    expect(searches.size).toBeGreaterThan(3);
    expect(requestsTo(/\/messages$/).every((q) => q.url.searchParams.get('$filter') === null)).toBe(true);
  });

  it('reports truncation when a window under a day still reaches the search cap', async () => {
    const small = await startGraphApi({ searchCap: 20 });
    try {
      const t = grantTokenSource(small.grant, () => new Error('revoked'));
      const at = Date.parse('2024-03-03T10:00:00Z');
      for (let i = 0; i < 30; i++)
        small.add({
          raw: mime({ from: 'ann@example.test', to: 'owner@outlook.test', subject: `a${i}` }),
          receivedDateTime: new Date(at + i * 1000),
        });
      const c = new GraphClient(t.source, { graphUrl: small.url, searchCap: 20 });
      const r = await c.listWindow(small.folderId('inbox'), {
        since: new Date(at - 3 * DAY),
        until: new Date(at + 3 * DAY),
        participant: 'ann@example.test',
      });
      expect(r.truncated).toBe(true);
      expect(r.messages.length).toBe(20);
    } finally {
      await small.close();
    }
  });

  it('fetches MIME byte for byte', async () => {
    const raw = Buffer.concat([
      Buffer.from('From: ann@example.test\r\nTo: owner@outlook.test\r\nSubject: bytes\r\n\r\ncaf'),
      Buffer.from([0xe9, 0x0d, 0x0a, 0x00, 0xff, 0x0a]),
    ]);
    const m = graph.add({ raw });
    expect((await client().getMime(m.id)).equals(raw)).toBe(true);
  });

  it("finds a folder's earliest receipt time; null for an empty folder", async () => {
    for (const d of ['2024-03-01T00:00:00Z', '2023-01-02T03:04:05Z', '2024-01-01T00:00:00Z'])
      graph.add({
        raw: mime({ from: 'owner@outlook.test', to: 'ann@example.test', subject: d }),
        folder: 'sentitems',
        receivedDateTime: new Date(d),
      });
    const sent = graph.folderId('sentitems');
    expect(await client().oldestReceived(sent)).toEqual(new Date('2023-01-02T03:04:05Z'));
    expect(await client().oldestReceived(graph.folderId('junkemail'))).toBeNull();
  });

  it('follows delta rounds: first from a time, then new and removed messages, and asks for a resync when expired', async () => {
    const now = Date.now();
    graph.add({
      raw: mime({ from: 'old@example.test', to: 'owner@outlook.test', subject: 'old' }),
      receivedDateTime: new Date(now - 10 * DAY),
    });
    const recent = [1, 2, 3].map((i) =>
      graph.add({
        raw: mime({ from: 'r@example.test', to: 'owner@outlook.test', subject: `r${i}` }),
        receivedDateTime: new Date(now - i * 1000),
      }),
    );
    const inbox = graph.folderId('inbox');
    const first = await client({ pageSize: 2 }).delta(inbox, { since: new Date(now - DAY) });
    if (first.kind !== 'changes') throw new Error('expected changes');
    expect(first.changed.map((m) => m.id).sort()).toEqual(recent.map((m) => m.id).sort());
    expect(first.removed).toEqual([]);
    expect(requestsTo(/\/delta$/)).toHaveLength(2);

    const fresh = graph.add({
      raw: mime({ from: 'n@example.test', to: 'owner@outlook.test', subject: 'new' }),
    });
    graph.move(recent[0]!.id, 'deleteditems');
    const second = await client().delta(inbox, { deltaLink: first.deltaLink });
    if (second.kind !== 'changes') throw new Error('expected changes');
    expect(second.changed.map((m) => m.id)).toEqual([fresh.id]);
    expect(second.removed).toEqual([recent[0]!.id]);

    const quiet = await client().delta(inbox, { deltaLink: second.deltaLink });
    expect(quiet).toMatchObject({ kind: 'changes', changed: [], removed: [] });

    graph.expireDeltaTokens();
    expect(await client().delta(inbox, { deltaLink: second.deltaLink })).toEqual({ kind: 'resync' });
  });

  it('refuses to follow a link to another host', async () => {
    graph.fail({
      status: 200,
      body: { value: [], '@odata.nextLink': 'https://127.0.0.2:9/v1.0/me/messages?$skip=10' },
    });
    const err = await client()
      .listWindow(graph.folderId('inbox'), { since: new Date(0), until: new Date() })
      .catch((e) => e);
    expect(err).toBeInstanceOf(ProviderRequestError);
    expect(err.message).toContain('outside');
  });

  it("waits out a 429's Retry-After, and retries 503 a bounded number of times", async () => {
    graph.fail({
      status: 429,
      retryAfter: '1',
      body: graph.error('TooManyRequests', 'Application is over its MailboxConcurrency limit.'),
    });
    await expect(client().me()).resolves.toMatchObject({ address: 'owner@outlook.test' });
    const [a, b] = requestsTo(/^\/v1\.0\/me$/);
    expect(b!.at - a!.at).toBeGreaterThanOrEqual(1000);

    graph.fail({ status: 503, times: 10, body: graph.error('ServiceUnavailable', 'busy') });
    const err = await client({ policy: { maxAttempts: 2, baseDelayMs: 5 } })
      .me()
      .catch((e) => e);
    expect(err).toBeInstanceOf(ProviderThrottledError);
    expect(err.status).toBe(503);
    expect(requestsTo(/^\/v1\.0\/me$/)).toHaveLength(4);
  });

  it('refreshes after a 401, fails on a 403 and passes a revoked grant through', async () => {
    await client().me();
    const old = graph.grant.token!;
    graph.grant.expire();
    await expect(client().me()).resolves.toBeTruthy();
    expect(tokens.asked).toContain(old);

    graph.fail({
      status: 403,
      body: graph.error('ErrorAccessDenied', 'Access is denied. Check credentials and try again.'),
    });
    await expect(client().me()).rejects.toThrow(ProviderAuthError);

    graph.grant.revoke();
    await expect(client().me()).rejects.toThrow(OAuthRevokedError);
  });
});
