/**
 * The SparkPost client against the local HTTPS stand-in of the Transmissions API
 * (libs/testkit/peers/sparkpost-api.ts), through the guarded outbound API.
 */
import { createServer } from 'node:net';
import { guardedAgents } from '@mailyard/platform';
import { type SparkPostStandIn, startSparkPostApi } from '@mailyard/testkit/peers/sparkpost-api';
import { ProviderAuthError, ProviderRequestError } from '../src/api/errors';
import { ProviderThrottledError } from '../src/oauth/types';
import { SparkPostClient } from '../src/sparkpost';

let api: SparkPostStandIn;
const open = guardedAgents({ allowPrivate: true });
const guarded = guardedAgents({ allowPrivate: false });

beforeAll(async () => {
  api = await startSparkPostApi();
});
afterAll(async () => {
  await api.close();
  for (const a of [open, guarded]) {
    a.http.destroy();
    a.https.destroy();
  }
});

const transmission = {
  rfc822: Buffer.from('From: a@b.test\r\nTo: c@d.test\r\nSubject: héllo\r\n\r\nbody\r\n'),
  recipients: ['c@d.test', 'bcc@d.test'],
  metadata: { ref_id: 'r1', copy_id: 'c1' },
};

it('posts the documented transmission and reads the transmission id', async () => {
  const key = api.newKey();
  const client = new SparkPostClient({ apiKey: key, baseUrl: api.url, agents: open });
  const accepted = await client.send({ ...transmission, campaignId: 'x'.repeat(80) });
  const t = api.transmissions.at(-1)!;
  expect(accepted).toEqual({ id: t.id, accepted: 2, rejected: 0 });
  expect(t.apiKey).toBe(key);
  expect(t.rfc822.equals(transmission.rfc822)).toBe(true);
  expect(t.campaignId).toHaveLength(64);
  const req = api.requests.at(-1)!;
  expect(req.headers.authorization).toBe(key);
  expect(req.url.pathname).toBe('/api/v1/transmissions');
});

it('classifies refusals: 401 auth, 503 busy with Retry-After, 422 final with SparkPost’s text', async () => {
  const client = new SparkPostClient({ apiKey: 'not-a-key', baseUrl: api.url, agents: open });
  await expect(client.send(transmission)).rejects.toBeInstanceOf(ProviderAuthError);
  const good = new SparkPostClient({ apiKey: api.newKey(), baseUrl: api.url, agents: open });
  api.fail({ status: 503, retryAfter: '7', body: api.error('Service Unavailable') });
  await expect(good.send(transmission)).rejects.toMatchObject({
    constructor: ProviderThrottledError,
    status: 503,
    retryAfterMs: 7000,
  });
  await expect(good.send({ ...transmission, recipients: ['not an address'] })).rejects.toMatchObject({
    constructor: ProviderRequestError,
    status: 422,
    message: 'SparkPost 422: Invalid recipient address: address.email is not valid',
  });
});

it('refuses a private base_url through the guard for good, and retries a refused connection', async () => {
  const tenant = new SparkPostClient({ apiKey: api.newKey(), baseUrl: api.url, agents: guarded });
  await expect(tenant.send(transmission)).rejects.toMatchObject({
    constructor: ProviderRequestError,
    reason: 'ETARGET_PRIVATE',
  });
  const closed = createServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
  const port = (closed.address() as { port: number }).port;
  await new Promise<void>((r) => closed.close(() => r()));
  const gone = new SparkPostClient({ apiKey: 'k', baseUrl: `https://127.0.0.1:${port}`, agents: open });
  await expect(gone.send(transmission)).rejects.toMatchObject({
    constructor: ProviderThrottledError,
    status: null,
  });
});

it('gives up on an endpoint that does not answer in time', async () => {
  const sockets: Array<{ destroy(): void }> = [];
  const silent = createServer((socket) => sockets.push(socket));
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  const port = (silent.address() as { port: number }).port;
  try {
    const client = new SparkPostClient({
      apiKey: 'k',
      baseUrl: `https://127.0.0.1:${port}`,
      agents: open,
      timeoutMs: 300,
    });
    await expect(client.send(transmission)).rejects.toMatchObject({
      constructor: ProviderThrottledError,
      message: 'SparkPost did not answer: ETIMEDOUT: no answer within 300 ms',
    });
  } finally {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((r) => silent.close(() => r()));
  }
});
