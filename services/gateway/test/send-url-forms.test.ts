import type { Server } from 'node:http';
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { boundPort, closeServer, listen, metricsRegistry } from '@mailyard/platform';
import { createTenant } from '@mailyard/store';
import { endpointKeys } from '@mailyard/testkit/app-routes';
import { type SharedStores, type TestGateway, createStores, startGateway } from './support/harness';
import { addDomainMailer } from './support/mailers.fixture';

/**
 * POST /v1/email/send has one chain, the route's runner (platform fast-route.ts), reached two
 * ways: the exact URL `/v1/email/send` in front of express, every other form express routes there
 * (trailing slash, query string, other case) from the first layer of express's chain. The same
 * raw requests go to the exact URL on one gateway and to `/v1/email/send/` on another (same
 * stores, over real sockets), and the raw responses (status line, every header in order, body)
 * must be equal once the values that differ per request anyway (Date, generated ids, the span of
 * traceparent, ref_id, clock-derived seconds) are masked. The duration metric must get the same
 * labels. Each side has its own tenant and mailers, so rate-limit counts and replays line up.
 * The URL forms themselves (query string, trailing slash, upper case, HEAD, OPTIONS, GET) go to
 * both sides alike; HEAD, OPTIONS and GET go through express's chain on both.
 */

interface Side {
  gw: TestGateway;
  /** The URL a case without one of its own is sent to. */
  sendUrl: string;
  server: Server;
  port: number;
  key: string;
  /** An enterprise tenant: its limit is 1 request per window (RATE_LIMIT_ENTERPRISE). */
  limitedKey: string;
  mailer: string;
  unverified: string;
  limitedMailer: string;
}

interface Ids {
  sendUrl: string;
  key: string;
  limitedKey: string;
  mailer: string;
  unverified: string;
  limitedMailer: string;
}

interface Case {
  name: string;
  raw: (ids: Ids) => Buffer;
}

const ENV = {
  // Fixed windows start at multiples of their length: a year-long one is not crossed between the
  // two sides' answers to a case (a 60 s one was, on a loaded machine, and the counts differed).
  RATE_LIMIT_WINDOW_SECONDS: String(365 * 24 * 3600),
  RATE_LIMIT_STANDARD: '1000000',
  RATE_LIMIT_ENTERPRISE: '1',
  HTTP_SEND_BODY_LIMIT: '64kb',
};

/** Raw request bytes: request line, headers as given (Connection: close added), body. */
function http(
  method: string,
  url: string,
  headers: Record<string, string>,
  body?: string | Buffer,
  opts: { chunked?: boolean; length?: number } = {},
): Buffer {
  const payload = body === undefined ? undefined : Buffer.from(body);
  const lines = [`${method} ${url} HTTP/1.1`, 'Host: gateway.test', 'Connection: close'];
  for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
  if (payload && opts.chunked) lines.push('Transfer-Encoding: chunked');
  else if (opts.length !== undefined) lines.push(`Content-Length: ${opts.length}`);
  else if (payload) lines.push(`Content-Length: ${payload.length}`);
  const head = Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
  if (!payload) return head;
  if (!opts.chunked) return Buffer.concat([head, payload]);
  // Three chunks of uneven size, then the last-chunk.
  const parts: Buffer[] = [head];
  const cuts = [0, Math.floor(payload.length / 3), Math.floor(payload.length / 2), payload.length];
  for (let i = 0; i < 3; i++) {
    const piece = payload.subarray(cuts[i], cuts[i + 1]);
    if (piece.length) parts.push(Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n'));
  }
  parts.push(Buffer.from('0\r\n\r\n'));
  return Buffer.concat(parts);
}

/** Sends `raw` on a fresh connection; the whole response as the server wrote it (it closes). */
function exchange(port: number, raw: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', (err) =>
      // The server may close before taking a refused body: what it answered is the response.
      chunks.length ? resolve(Buffer.concat(chunks).toString('latin1')) : reject(err),
    );
    socket.on('end', () => resolve(Buffer.concat(chunks).toString('latin1')));
    socket.write(raw);
  });
}

const ULID_RE = /[0-9A-HJKMNP-TV-Z]{26}/g;
const UUID_RE = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

/** Masks what differs between any two requests (not between the paths). */
function mask(response: string): string {
  return response
    .replace(/^Date: .*$/gim, 'Date: <date>')
    .replace(/^(traceparent: 00-[0-9a-f]{32}-)[0-9a-f]{16}(-[0-9a-f]{2})$/gim, '$1<span>$2')
    .replace(/^(traceparent: 00-)[0-9a-f]{32}/gim, '$1<trace>')
    .replace(/^(X-RateLimit-Reset|Retry-After): \d+$/gim, '$1: <seconds>')
    .replace(UUID_RE, '<uuid>')
    .replace(ULID_RE, '<ulid>');
}

const durationCounts = async (): Promise<Map<string, number>> => {
  const metric = metricsRegistry.getSingleMetric('mailyard_http_request_duration_seconds');
  const out = new Map<string, number>();
  for (const v of (await metric!.get()).values) {
    if (!(v as { metricName?: string }).metricName?.endsWith('_count')) continue;
    out.set(`${v.labels.method} ${v.labels.route} ${v.labels.status}`, v.value);
  }
  return out;
};

/** Which labels' counts went up between two readings. */
const grown = (before: Map<string, number>, after: Map<string, number>) =>
  [...after]
    .filter(([k, n]) => n > (before.get(k) ?? 0))
    .map(([k, n]) => `${k} +${n - (before.get(k) ?? 0)}`);

const json = { 'Content-Type': 'application/json' };
const auth = (key: string) => ({ Authorization: `Bearer ${key}`, 'X-Request-Id': 'req-fast-1' });
const body = (ids: Ids, more: Record<string, unknown> = {}, mailer = ids.mailer) =>
  JSON.stringify({
    from: { email: 'sender@example.com', name: 'Sender' },
    to: [{ email: 'alice@dest.test', name: 'Alice' }],
    mailer_id: mailer,
    subject: 'Hello',
    content: [{ type: 'text/plain', value: 'Hi there' }],
    ...more,
  });
const send = (
  headers: (ids: Ids) => Record<string, string>,
  payload?: (ids: Ids) => string | Buffer,
  opts: { chunked?: boolean; length?: number; method?: string; url?: string } = {},
) =>
  ((ids: Ids) =>
    http(
      opts.method ?? 'POST',
      opts.url ?? ids.sendUrl,
      headers(ids),
      payload?.(ids),
      opts,
    )) satisfies Case['raw'];

/** A JSON request with the side's key. */
const asTenant = (
  payload?: (ids: Ids) => string | Buffer,
  opts?: Parameters<typeof send>[2],
  headers: Record<string, string> = {},
) => send((i) => ({ ...auth(i.key), ...json, ...headers }), payload, opts);

/** A valid send with the side's key and this Content-Type (none: undefined). */
const withContentType = (type: string | undefined) =>
  send(
    (i) => ({ ...auth(i.key), ...(type === undefined ? {} : { 'Content-Type': type }) }),
    (i) => body(i),
  );

/** A send by the side's enterprise tenant (limit 1 per window). */
const asLimitedTenant = send(
  (i) => ({ ...auth(i.limitedKey), ...json }),
  (i) => body(i, {}, i.limitedMailer),
);

const CASES: Case[] = [
  {
    name: 'valid send',
    raw: asTenant((i) => body(i)),
  },
  {
    name: 'valid send, caller traceparent, no request id',
    raw: send(
      (i) => ({
        Authorization: `Bearer ${i.key}`,
        traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
        ...json,
      }),
      (i) => body(i),
    ),
  },
  {
    name: 'X-API-Key header',
    raw: send(
      (i) => ({ 'X-API-Key': ` ${i.key} `, ...json }),
      (i) => body(i),
    ),
  },
  {
    name: 'chunked body',
    raw: asTenant((i) => body(i), { chunked: true }),
  },
  {
    name: 'gzip body',
    raw: asTenant((i) => gzipSync(body(i)), {}, { 'Content-Encoding': 'gzip' }),
  },
  {
    name: 'idempotent send',
    raw: asTenant((i) => body(i), {}, { 'Idempotency-Key': 'fast-1' }),
  },
  {
    name: 'idempotent replay',
    raw: asTenant((i) => body(i), {}, { 'Idempotency-Key': 'fast-1' }),
  },
  {
    name: 'idempotency key reused with another body (422)',
    raw: asTenant((i) => body(i, { subject: 'Other' }), {}, { 'Idempotency-Key': 'fast-1' }),
  },
  {
    name: 'invalid idempotency key (400)',
    raw: asTenant((i) => body(i), {}, { 'Idempotency-Key': 'x'.repeat(256) }),
  },
  {
    name: 'no key (401)',
    raw: send(
      () => json,
      (i) => body(i),
    ),
  },
  {
    name: 'unknown key (401)',
    raw: send(
      () => ({ ...auth('myk_not_a_key_0123456789'), ...json }),
      (i) => body(i),
    ),
  },
  {
    name: 'unknown key again (401, from the key cache)',
    raw: send(
      () => ({ ...auth('myk_not_a_key_0123456789'), ...json }),
      (i) => body(i),
    ),
  },
  {
    name: 'malformed Authorization (401)',
    raw: send(
      () => ({ Authorization: 'Basic abc', ...json }),
      (i) => body(i),
    ),
  },
  {
    name: 'key too long (401)',
    raw: send(
      () => ({ 'X-API-Key': 'k'.repeat(300), ...json }),
      (i) => body(i),
    ),
  },
  {
    name: 'declared length over the limit (413)',
    raw: asTenant(undefined, { length: 100 * 1024 }),
  },
  {
    name: 'chunked body over the limit (413)',
    raw: asTenant((i) => body(i, { subject: 's'.repeat(70 * 1024) }), { chunked: true }),
  },
  {
    name: 'text/plain (415)',
    raw: withContentType('text/plain'),
  },
  {
    name: 'no content type (415)',
    raw: withContentType(undefined),
  },
  {
    name: 'latin1 charset (415)',
    raw: withContentType('application/json; charset=latin1'),
  },
  {
    name: 'vendor +json with utf-8 charset',
    raw: withContentType('application/vnd.x+json; charset="UTF-8"'),
  },
  {
    name: 'unknown encoding (415)',
    raw: asTenant((i) => body(i), {}, { 'Content-Encoding': 'compress' }),
  },
  {
    name: 'gzip that does not decompress (400)',
    raw: asTenant((i) => body(i), {}, { 'Content-Encoding': 'gzip' }),
  },
  {
    name: 'malformed JSON (400)',
    raw: asTenant(() => '{"from": '),
  },
  {
    name: 'empty body (400)',
    raw: asTenant(() => ''),
  },
  { name: 'no body at all (400)', raw: send((i) => auth(i.key)) },
  {
    name: 'JSON array (400)',
    raw: asTenant(() => '[1,2,3]'),
  },
  {
    name: 'not UTF-8 (400)',
    raw: asTenant(() => Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d])),
  },
  {
    name: 'NUL in a string (400)',
    raw: asTenant((i) => body(i, { subject: 'a\u0000b' })),
  },
  {
    name: 'lone surrogate (400)',
    raw: asTenant((i) => body(i).replace('"Hello"', '"\\ud800x"')),
  },
  {
    name: 'NUL in a key (400)',
    raw: asTenant((i) => body(i, { custom_args: { 'a\u0000': 1 } })),
  },
  {
    name: 'lone surrogate in a key (400)',
    raw: asTenant((i) => body(i).replace('"subject"', '"\\udc00x":1,"subject"')),
  },
  {
    name: 'escaped backslash before u (no unsafe text)',
    raw: asTenant((i) => body(i, { subject: 'C:\\users\\u0000' })),
  },
  {
    name: 'IDNA recipient domain',
    raw: asTenant((i) => body(i, { to: [{ email: 'alice@Bücher.example' }] })),
  },
  {
    name: 'IDNA recipient domain again',
    raw: asTenant((i) => body(i, { to: [{ email: 'alice@Bücher.example' }] })),
  },
  {
    name: 'deeply nested (400)',
    raw: asTenant(() => `${'['.repeat(5000)}${']'.repeat(5000)}`),
  },
  {
    name: 'JSON array of many numbers (400)',
    raw: asTenant(() => `[${'0,'.repeat(30_000)}0]`),
  },
  {
    name: 'BOM and odd whitespace',
    raw: asTenant((i) => `\ufeff \n${body(i)}\t\n`),
  },
  {
    name: 'validation: missing from (400)',
    raw: asTenant((i) => body(i, { from: undefined })),
  },
  {
    name: 'validation: bad to (400)',
    raw: asTenant((i) => body(i, { to: [{ email: 'not an address' }] })),
  },
  {
    name: 'unknown template (404)',
    raw: asTenant((i) =>
      body(i, { subject: undefined, content: undefined, template_id: 'tmpl_01JNOTATEMPLATE0000000000' }),
    ),
  },
  {
    name: 'unknown mailer (404)',
    raw: asTenant((i) => body(i, {}, 'dom_01JNOTAMAILER00000000000000')),
  },
  {
    name: 'unverified mailer (422)',
    raw: asTenant((i) => body(i, {}, i.unverified)),
  },
  {
    name: 'from outside the domain (422)',
    raw: asTenant((i) => body(i, { from: { email: 'a@elsewhere.test' } })),
  },
  {
    name: 'rate limit: first request of the window',
    raw: asLimitedTenant,
  },
  {
    name: 'rate limit: over the limit (429)',
    raw: asLimitedTenant,
  },
  // Not the exact URL: both sides take these through express's entry.
  {
    name: 'query string',
    raw: asTenant((i) => body(i), { url: '/v1/email/send?a=1' }),
  },
  {
    name: 'trailing slash',
    raw: asTenant((i) => body(i), { url: '/v1/email/send/' }),
  },
  {
    name: 'upper case path',
    raw: asTenant((i) => body(i), { url: '/V1/email/send' }),
  },
  {
    name: 'NUL in the query (400, the URL guard)',
    raw: asTenant((i) => body(i), { url: '/V1/Email/Send/?q=%00' }),
  },
  {
    name: 'unknown key with a query (401 before the URL guard)',
    raw: send(
      () => ({ ...auth('myk_not_a_key_0123456789'), ...json }),
      (i) => body(i),
      { url: '/v1/email/send?q=%00' },
    ),
  },
  { name: 'HEAD', raw: send((i) => auth(i.key), undefined, { method: 'HEAD' }) },
  { name: 'OPTIONS', raw: send((i) => auth(i.key), undefined, { method: 'OPTIONS' }) },
  { name: 'OPTIONS without a key (401)', raw: send(() => ({}), undefined, { method: 'OPTIONS' }) },
  { name: 'GET', raw: send((i) => auth(i.key), undefined, { method: 'GET' }) },
];

describe('POST /v1/email/send: the exact URL and its express-routed forms answer alike, through one runner', () => {
  let stores: SharedStores;
  const sides: Record<'direct' | 'express', Side> = {} as never;

  beforeAll(async () => {
    stores = await createStores('servers');
    for (const [name, sendUrl] of [
      ['direct', '/v1/email/send'],
      ['express', '/v1/email/send/'],
    ] as const) {
      const gw = await startGateway(stores, ENV);
      const own = await gw.newTenant();
      const limited = await createTenant(gw.ctx.db, { name: `limited-${name}`, tier: 'enterprise' });
      const server = await listen(gw.app, 0, '127.0.0.1');
      sides[name] = {
        gw,
        sendUrl,
        server,
        port: boundPort(server),
        key: own.apiKey,
        limitedKey: limited.apiKey,
        mailer: await addDomainMailer(gw.ctx, own.tenantId, 'example.com'),
        unverified: await addDomainMailer(gw.ctx, own.tenantId, 'unverified.test', { verified: false }),
        limitedMailer: await addDomainMailer(gw.ctx, limited.id, 'example.com'),
      };
    }
  });
  afterAll(async () => {
    for (const side of Object.values(sides)) {
      await closeServer(side.server);
      await side.gw.close();
    }
    await stores?.drop();
  });

  const answer = async (side: Side, c: Case) => {
    const before = await durationCounts();
    const response = await exchange(side.port, c.raw(side));
    const after = await durationCounts();
    return { response: mask(response), metrics: grown(before, after) };
  };

  it('gives the same raw responses and metric labels for every case', async () => {
    const statuses = new Set<string>();
    for (const c of CASES) {
      const direct = await answer(sides.direct, c);
      const viaExpress = await answer(sides.express, c);
      expect({ case: c.name, ...direct }).toEqual({ case: c.name, ...viaExpress });
      statuses.add(direct.response.slice(9, 12));
    }
    // The cases reach every answer the route gives (not, say, 401 for all).
    expect([...statuses].sort()).toEqual(['200', '400', '401', '404', '413', '415', '422', '429']);
  });

  it('answers the exact URL itself (not express) on the direct side', async () => {
    // A sanity check that the comparison above compares two entries: express's per-request
    // prototype swap gives its req an `app`; the exact-URL entry's request never gets one.
    const seen: string[] = [];
    for (const side of [sides.direct, sides.express]) {
      const listener = (req: { app?: unknown }) => {
        setImmediate(() => seen.push(req.app ? 'express' : 'direct'));
      };
      side.server.prependListener('request', listener);
      await exchange(side.port, CASES[0]!.raw(side));
      side.server.off('request', listener);
    }
    expect(seen).toEqual(['direct', 'express']);
  });

  it('lists the route once among the routes express serves', () => {
    const listed = endpointKeys(sides.express.gw.app).filter((k) => k === 'POST /v1/email/send');
    expect(listed).toEqual(['POST /v1/email/send']);
  });
});
