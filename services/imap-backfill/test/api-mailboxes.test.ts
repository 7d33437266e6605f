/**
 * The Gmail and Outlook MailboxClients against the Gmail API and Graph stand-ins (TLS, test CA),
 * through the real provider clients: folders by role, exact windows, participants (Graph beyond
 * the search cap), oldest, fetch (bytes, thread, labels, a message gone meanwhile), live positions
 * (new INBOX mail only; expired history and delta links re-list from the last round), and the
 * provider's errors as MailboxError kinds. Token sources are the stand-ins' grants here; the
 * token lifecycle (refresh, revocation -> deactivation) is test/oauth-mailbox.test.ts's.
 */
import { GmailClient, GraphClient, OAuthRevokedError } from '@mailyard/providers';
import { simpleMessage } from '@mailyard/testkit/mime';
import { grantTokenSource } from '@mailyard/testkit/peers/api-stand-in';
import { type GmailStandIn, startGmailApi } from '@mailyard/testkit/peers/gmail-api';
import { type GraphStandIn, startGraphApi } from '@mailyard/testkit/peers/graph-api';
import { GmailMailbox } from '../src/clients/gmail/gmail-mailbox';
import { GraphMailbox } from '../src/clients/graph/graph-mailbox';
import { type MailboxClient, MailboxError, type RawMessage } from '../src/mailbox/mailbox-client';

jest.setTimeout(60_000);

const DAY = 86_400_000;
const T0 = new Date(Math.floor(Date.now() / 1000) * 1000 - 30 * DAY);
const at = (offsetMs: number) => new Date(T0.getTime() + offsetMs);
const mail = (subject: string, h: { from?: string; to?: string; extra?: string } = {}) =>
  simpleMessage({
    from: h.from ?? 'someone@peer.test',
    to: h.to ?? 'owner@mailbox.test',
    subject,
    id: `<${subject}@peer.test>`,
    ...(h.extra ? { extra: h.extra } : {}),
  });
const policy = { baseDelayMs: 10, maxWaitMs: 2000 };

async function all(it: AsyncIterable<RawMessage>): Promise<RawMessage[]> {
  const out: RawMessage[] = [];
  for await (const m of it) out.push(m);
  return out;
}
const subjects = (ms: Array<{ source: Buffer }>) =>
  ms.map((m) => /^Subject: (.*)$/m.exec(m.source.toString())![1]!.trim()).sort();

async function thrown(p: Promise<unknown>): Promise<MailboxError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(MailboxError);
  return err as MailboxError;
}

describe('GmailMailbox', () => {
  let gmail: GmailStandIn;
  let box: MailboxClient;
  beforeAll(async () => {
    gmail = await startGmailApi({ email: 'owner@mailbox.test' });
    const tokens = grantTokenSource(gmail.grant, () => new OAuthRevokedError('invalid_grant'));
    box = new GmailMailbox(new GmailClient(tokens.source, { apiUrl: `${gmail.url}/`, policy, pageSize: 3 }), {
      concurrency: 3,
    });
    gmail.add({ raw: mail('before'), internalDate: at(-1000) });
    gmail.add({ raw: mail('start'), internalDate: at(0) });
    gmail.add({ raw: mail('alice-from', { from: 'Alice <alice@peer.test>' }), internalDate: at(DAY) });
    gmail.add({
      raw: mail('alice-to', { to: 'alice@peer.test' }),
      labelIds: ['SENT'],
      internalDate: at(DAY + 1),
    });
    gmail.add({
      raw: mail('self', { to: 'owner@mailbox.test' }),
      labelIds: ['INBOX', 'SENT'],
      internalDate: at(DAY + 2),
    });
    gmail.add({ raw: mail('end'), internalDate: at(2 * DAY) });
    gmail.add({ raw: mail('after'), internalDate: at(2 * DAY + 1000) });
    gmail.add({ raw: mail('junk'), labelIds: ['SPAM'], internalDate: at(DAY) });
    gmail.add({ raw: mail('oldest-sent'), labelIds: ['SENT'], internalDate: at(-5 * DAY) });
  });
  afterAll(() => gmail.close());

  it('folders are the system labels; every label has one validity', async () => {
    expect(await box.resolveFolders()).toEqual({
      inbox: 'INBOX',
      sent: 'SENT',
      spam: 'SPAM',
      trash: 'TRASH',
    });
    expect(await box.openFolder('SENT')).toEqual({ path: 'SENT', uidValidity: 'gmail' });
    expect(box.idScope).toBe('mailbox');
  });

  it('lists the exact inclusive window with receipt time, thread and labels; a participant in From, To or Cc', async () => {
    await box.openFolder('INBOX');
    const refs = await box.list({ since: at(0), until: at(2 * DAY) });
    const byId = new Map(gmail.messages().map((m) => [m.id, m]));
    expect(refs.map((r) => byId.get(r.id)!.headers.subject).sort()).toEqual([
      'alice-from',
      'end',
      'self',
      'start',
    ]);
    const self = refs.find((r) => byId.get(r.id)!.headers.subject === 'self')!;
    expect(self).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{16}$/),
      receivedAt: at(DAY + 2),
      threadId: byId.get(self.id)!.threadId,
      labelIds: ['INBOX', 'SENT'],
    });
    await box.openFolder('SENT');
    const alice = await box.list({ since: at(0), until: at(2 * DAY), participant: 'alice@peer.test' });
    expect(alice.map((r) => byId.get(r.id)!.headers.subject)).toEqual(['alice-to']);
    await box.openFolder('SPAM');
    expect(await box.list({ since: at(0), until: at(2 * DAY) })).toHaveLength(1);
  });

  it('oldest is the earliest receipt second of the label', async () => {
    await box.openFolder('SENT');
    expect(await box.oldest()).toEqual(at(-5 * DAY));
    await box.openFolder('TRASH');
    expect(await box.oldest()).toBeNull();
  });

  it('fetches the exact bytes with thread and labels; a message gone meanwhile is left out', async () => {
    await box.openFolder('INBOX');
    const refs = await box.list({ since: at(-DAY), until: at(3 * DAY) });
    const gone = refs[0]!.id;
    gmail.fail({
      status: 404,
      body: gmail.error(404, 'notFound', 'Requested entity was not found.'),
      match: (r) => r.url.pathname.endsWith(`/messages/${gone}`),
    });
    const got = await all(box.fetch(refs));
    expect(got).toHaveLength(refs.length - 1);
    expect(got.map((m) => m.id)).not.toContain(gone);
    for (const m of got) {
      const stored = gmail.messages().find((s) => s.id === m.id)!;
      expect(m.source.equals(stored.raw)).toBe(true);
      expect(m).toMatchObject({
        threadId: stored.threadId,
        labelIds: stored.labelIds,
        receivedAt: stored.internalDate,
      });
    }
  });

  it('live: new INBOX mail after the position only; an expired history id lists INBOX again from the last round', async () => {
    const start = await box.livePosition();
    expect(start).toMatchObject({ validity: 'gmail', lastUid: 0 });
    const n1 = gmail.add({ raw: mail('live-1') });
    gmail.add({ raw: mail('live-sent'), labelIds: ['SENT'] });
    const first = (await box.liveChanges(start))!;
    expect(first.refs.map((r) => r.id)).toEqual([n1.id]);
    expect(first.refs[0]).toMatchObject({ labelIds: ['INBOX'], threadId: n1.threadId });
    const quiet = (await box.liveChanges(first.next))!;
    expect(quiet.refs).toEqual([]);

    const n2 = gmail.add({ raw: mail('live-2') });
    gmail.expireHistoryBefore(gmail.historyId() + 1);
    const again = (await box.liveChanges(quiet.next))!;
    // Listed again from the last round on (less the margin): live-1 and live-2 (the claim dedupes).
    expect(again.refs.map((r) => r.id).sort()).toEqual([n1.id, n2.id].sort());
    expect(await box.liveChanges({ validity: '42', lastUid: 7, cursor: null })).toBeNull();
  });

  it('provider errors are mailbox errors: busy with Retry-After is transient, a 403 is auth, a revoked grant auth without deactivation', async () => {
    gmail.fail({ status: 429, retryAfter: '30', body: gmail.error(429, 'rateLimitExceeded', 'Slow down') });
    const busy = await thrown(box.resolveFolders());
    expect(busy).toMatchObject({ kind: 'transient', retryAfterMs: 30_000, source: 'Gmail API' });
    gmail.fail({ status: 403, body: gmail.error(403, 'insufficientPermissions', 'Insufficient Permission') });
    expect(await thrown(box.resolveFolders())).toMatchObject({
      kind: 'auth',
      deactivation: 'provider_auth_error',
    });
    gmail.grant.revoke();
    const revoked = await thrown(box.resolveFolders());
    expect(revoked).toMatchObject({ kind: 'auth', deactivation: null });
    expect(revoked.message).toMatch(/revoked/);
  });
});

describe('GraphMailbox', () => {
  let graph: GraphStandIn;
  let box: MailboxClient;
  const CAP = 20;
  beforeAll(async () => {
    graph = await startGraphApi({ email: 'owner@mailbox.test', searchCap: CAP });
    const tokens = grantTokenSource(graph.grant, () => new OAuthRevokedError('invalid_grant'));
    const client = new GraphClient(tokens.source, {
      graphUrl: graph.url,
      policy,
      pageSize: 7,
      searchCap: CAP,
    });
    box = new GraphMailbox(client, { concurrency: 3 });
    graph.add({ raw: mail('before'), receivedDateTime: at(-1000) });
    graph.add({ raw: mail('start'), receivedDateTime: at(0) });
    graph.add({ raw: mail('end'), receivedDateTime: at(2 * DAY) });
    graph.add({ raw: mail('after'), receivedDateTime: at(2 * DAY + 1000) });
    graph.add({
      raw: mail('sent-1', { to: 'x@peer.test' }),
      folder: 'sentitems',
      receivedDateTime: at(-3 * DAY),
    });
    // 50 messages of bob over 10 days: more than the search cap answers at once.
    for (let i = 0; i < 50; i++)
      graph.add({
        raw: mail(`bob-${i}`, { from: 'bob@peer.test' }),
        receivedDateTime: at(3 * DAY + i * 4.8 * 3600_000),
      });
  });
  afterAll(() => graph.close());

  it('folders by well-known name; lists the exact window; label is the folder name, thread the conversation', async () => {
    const folders = await box.resolveFolders();
    expect(folders.inbox).toBe(graph.folderId('inbox'));
    expect(folders.sent).toBe(graph.folderId('sentitems'));
    await box.openFolder(folders.inbox!);
    const refs = await box.list({ since: at(0), until: at(2 * DAY) });
    const byId = new Map(graph.messages().map((m) => [m.id, m]));
    expect(refs.map((r) => byId.get(r.id)!.headers.subject).sort()).toEqual(['end', 'start']);
    expect(refs[0]).toMatchObject({
      labelIds: ['inbox'],
      threadId: byId.get(refs[0]!.id)!.conversationId,
      messageId: '<end@peer.test>',
    });
  });

  it('a participant search beyond the result cap is split until every message is found', async () => {
    const folders = await box.resolveFolders();
    await box.openFolder(folders.inbox!);
    const before = graph.requests.length;
    const refs = await box.list({ since: at(0), until: at(20 * DAY), participant: 'bob@peer.test' });
    expect(refs).toHaveLength(50);
    expect(new Set(refs.map((r) => r.id)).size).toBe(50);
    const searches = graph.requests.slice(before).filter((r) => r.url.searchParams.has('$search'));
    expect(searches.length).toBeGreaterThan(3);
  });

  it('oldest of a folder; fetch gives the bytes and leaves out a message gone meanwhile', async () => {
    const folders = await box.resolveFolders();
    await box.openFolder(folders.sent!);
    expect(await box.oldest()).toEqual(at(-3 * DAY));
    await box.openFolder(folders.inbox!);
    const refs = await box.list({ since: at(-DAY), until: at(3 * DAY) });
    graph.fail({
      status: 404,
      body: graph.error('ErrorItemNotFound', 'The specified object was not found in the store.'),
      match: (r) => r.url.pathname.includes(encodeURIComponent(refs[0]!.id)),
    });
    const gone = graph.messages().find((m) => m.id === refs[0]!.id)!.headers.subject;
    const got = await all(box.fetch(refs));
    expect(subjects(got)).toEqual(['after', 'before', 'end', 'start'].filter((s) => s !== gone));
    for (const m of got) expect(m.source.equals(graph.messages().find((s) => s.id === m.id)!.raw)).toBe(true);
  });

  it('live: mail received after the position; old mail moved in is not new; an expired delta re-lists from the last round', async () => {
    const start = await box.livePosition();
    expect(start).toMatchObject({ validity: 'outlook', lastUid: 0 });
    const n1 = graph.add({ raw: mail('live-1') });
    graph.move(graph.messages().find((m) => m.headers.subject === 'sent-1')!.id, 'inbox');
    const first = (await box.liveChanges(start))!;
    expect(first.refs.map((r) => r.id)).toEqual([n1.id]);
    expect(first.refs[0]).toMatchObject({
      labelIds: ['inbox'],
      threadId: n1.conversationId,
      messageId: '<live-1@peer.test>',
    });
    expect((await box.liveChanges(first.next))!.refs).toEqual([]);

    const n2 = graph.add({ raw: mail('live-2') });
    graph.expireDeltaTokens();
    const again = (await box.liveChanges(first.next))!;
    expect(again.refs.map((r) => r.id).sort()).toEqual([n1.id, n2.id].sort());
    expect((await box.liveChanges(again.next))!.refs).toEqual([]);
    expect(await box.liveChanges({ validity: 'gmail', lastUid: 0, cursor: '{"h":"1","t":"x"}' })).toBeNull();
  });

  it('a Retry-After the client does not sit out is a transient error with it', async () => {
    graph.fail({
      status: 429,
      retryAfter: '20',
      body: graph.error('TooManyRequests', 'Slow down'),
      times: 1,
    });
    expect(await thrown(box.resolveFolders())).toMatchObject({
      kind: 'transient',
      retryAfterMs: 20_000,
      source: 'Microsoft Graph',
    });
  });
});
