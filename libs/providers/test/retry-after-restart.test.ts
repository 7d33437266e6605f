import { type Kv, openKv } from '@mailyard/platform';
/**
 * A provider's Retry-After outlives the process that received it: the Gmail API and Graph
 * clients (real googleapis / HTTP against the stand-ins, TLS) record the "not before" of the
 * mailer in the kv (real Redis, a prefix of this file's own), and a restarted process (a new kv
 * connection, new clients and token sources: nothing kept in memory) does not call the provider
 * before then: a hold longer than the policy sits out is handed back at once, a short one is
 * waited out. Another mailer is not held.
 */
import {
  GmailClient,
  type GmailClientOptions,
  GraphClient,
  type GraphClientOptions,
  OAuthRevokedError,
  ProviderThrottledError,
  type TokenSource,
  kvThrottleGate,
  notBeforeKey,
} from '@mailyard/providers';
import { eventually } from '@mailyard/testkit/eventually';
import { grantTokenSource } from '@mailyard/testkit/peers/api-stand-in';
import { type GmailStandIn, startGmailApi } from '@mailyard/testkit/peers/gmail-api';
import { type GraphStandIn, startGraphApi } from '@mailyard/testkit/peers/graph-api';
import { REDIS_URL, testRedisPrefix } from '@mailyard/testkit/servers';

jest.setTimeout(60_000);

const prefix = testRedisPrefix();
const open: Kv[] = [];
let gmail: GmailStandIn;
let graph: GraphStandIn;

/**
 * One process's view: its own kv connection, once it answers (as a service's start waits for
 * it); clients built on it keep nothing else.
 */
async function processKv(): Promise<Kv> {
  const kv = await openKv({ REDIS_URL, REDIS_KEY_PREFIX: prefix });
  open.push(kv);
  await eventually(() => kv.check().then(() => true), 'the kv answering');
  return kv;
}

const revoked = () => new OAuthRevokedError('invalid_grant');

/** The token source of `mailerId` as the token lifecycle hands it out: with the mailer's gate. */
function tokensFor(grant: GmailStandIn['grant'], kv: Kv, mailerId: string): TokenSource {
  return Object.assign(grantTokenSource(grant, revoked).source, { throttle: kvThrottleGate(kv, mailerId) });
}

const gmailClient = (kv: Kv, mailerId: string, o: Partial<GmailClientOptions> = {}) =>
  new GmailClient(tokensFor(gmail.grant, kv, mailerId), { apiUrl: gmail.url, ...o });
const graphClient = (kv: Kv, mailerId: string, o: Partial<GraphClientOptions> = {}) =>
  new GraphClient(tokensFor(graph.grant, kv, mailerId), { graphUrl: graph.url, ...o });

beforeAll(async () => {
  [gmail, graph] = await Promise.all([
    startGmailApi({ email: 'owner@gmail.test' }),
    startGraphApi({ email: 'owner@outlook.test' }),
  ]);
});

afterAll(async () => {
  const kv = await processKv();
  for (const m of ['g-long', 'g-short', 'g-other', 'm-long']) await kv.del(notBeforeKey(m));
  await Promise.allSettled(open.map((k) => k.close()));
  await Promise.all([gmail?.close(), graph?.close()]);
});

const profileCalls = () => gmail.requests.filter((r) => r.url.pathname.endsWith('/profile'));
const meCalls = () => graph.requests.filter((r) => r.url.pathname === '/v1.0/me');

async function restart(kv: Kv): Promise<Kv> {
  await kv.close();
  return processKv();
}

describe('Gmail API 429 with Retry-After, then a restart', () => {
  it('the restarted process does not call Gmail before the Retry-After, and says how long is left', async () => {
    let kv = await processKv();
    gmail.fail({
      status: 429,
      retryAfter: '120',
      body: gmail.error(429, 'rateLimitExceeded', 'User-rate limit exceeded'),
    });
    const first = await gmailClient(kv, 'g-long')
      .profile()
      .catch((e) => e);
    expect(first).toBeInstanceOf(ProviderThrottledError);
    expect(profileCalls()).toHaveLength(1);

    kv = await restart(kv);
    const again = await gmailClient(kv, 'g-long')
      .profile()
      .catch((e) => e);
    expect(again).toBeInstanceOf(ProviderThrottledError);
    expect(again.retryAfterMs).toBeGreaterThan(100_000);
    expect(again.retryAfterMs).toBeLessThanOrEqual(120_000);
    // Nothing reached Gmail: not the profile, and not a second try.
    expect(profileCalls()).toHaveLength(1);

    // Another mailer of the same process is not held.
    await expect(gmailClient(kv, 'g-other').profile()).resolves.toMatchObject({
      emailAddress: 'owner@gmail.test',
    });
    expect(profileCalls()).toHaveLength(2);
  });

  it('a hold shorter than the policy sits out is waited out by the restarted process, then it calls', async () => {
    let kv = await processKv();
    const before = profileCalls().length;
    gmail.fail({ status: 429, retryAfter: '2', body: gmail.error(429, 'rateLimitExceeded', 'slow down') });
    // One try only: the process "crashes" right after the 429, before it could wait.
    const err = await gmailClient(kv, 'g-short', { policy: { maxAttempts: 1 } })
      .profile()
      .catch((e) => e);
    expect(err).toBeInstanceOf(ProviderThrottledError);

    kv = await restart(kv);
    await expect(gmailClient(kv, 'g-short').profile()).resolves.toBeTruthy();
    const [throttled, next] = profileCalls().slice(before);
    expect(next!.at - throttled!.at).toBeGreaterThanOrEqual(2000);
  });
});

describe('Microsoft Graph 429 with Retry-After, then a restart', () => {
  it('the restarted process does not call Graph before the Retry-After', async () => {
    let kv = await processKv();
    graph.fail({
      status: 429,
      retryAfter: '90',
      body: graph.error('ApplicationThrottled', 'Application is over its MailboxConcurrency limit.'),
    });
    const first = await graphClient(kv, 'm-long')
      .me()
      .catch((e) => e);
    expect(first).toBeInstanceOf(ProviderThrottledError);
    expect(meCalls()).toHaveLength(1);

    kv = await restart(kv);
    const again = await graphClient(kv, 'm-long')
      .me()
      .catch((e) => e);
    expect(again).toBeInstanceOf(ProviderThrottledError);
    expect(again.retryAfterMs).toBeGreaterThan(60_000);
    expect(again.retryAfterMs).toBeLessThanOrEqual(90_000);
    expect(meCalls()).toHaveLength(1);
  });
});
