import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { appRoutes } from '@mailyard/testkit/app-routes';
import type { Express } from 'express';
import type { RawRequest } from './live-gateway';

/** Deterministic PRNG (mulberry32): the same seed replays the same requests. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface RouteInfo {
  method: string;
  path: string;
}

const ALL_METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH'];

/** Every route of an express app (nested routers included), so new routes are fuzzed automatically. */
export function listRoutes(app: Express): RouteInfo[] {
  return appRoutes(app).flatMap((r) =>
    (r.all ? ALL_METHODS : [r.method]).map((method) => ({ method, path: r.path })),
  );
}

/** Valid-looking bodies per route, mutated by the fuzzer so requests get past the first checks. */
const SEEDS: Record<string, () => unknown> = {
  '/v1/email/template': () => ({
    name: 'Welcome',
    subject: 'Hi {{name}}',
    content: [{ type: 'text/html', value: '<p>Hello</p>' }],
  }),
  '/v1/email/send': () => ({
    from: { email: 'sender@example.com', name: 'Sender' },
    to: [{ email: 'a@example.org', name: 'A' }, { email: 'b@example.org' }],
    cc: [{ email: 'c@example.org' }],
    mailer_id: 'smtp_01JZZZZZZZZZZZZZZZZZZZZZZZ',
    subject: 'Hello {{name}}',
    content: [
      { type: 'text/plain', value: 'Hi {{name}}' },
      { type: 'text/html', value: '<a href="https://example.com">x</a>' },
    ],
    substitutions: { 'a@example.org': { name: 'A' } },
    headers: { 'X-Test': '1' },
    attachments: [{ filename: 'a.txt', content: 'aGVsbG8=', type: 'text/plain' }],
    custom_args: { order: 1, tags: ['x'] },
    settings: { open_tracking: { enable: true } },
    campaign_id: 'c1',
  }),
  '/v1/mailer/smtp': () => ({
    mailer_id: 'smtp_01JZZZZZZZZZZZZZZZZZZZZZZZ',
    name: 'Relay',
    email: 'relay@example.com',
    config: { host: 'smtp.invalid', port: 2525, username: 'u', password: 'p', secure: 'None' },
  }),
  '/v1/mailer/imap': () => ({
    mailer_id: 'basic_imap_01JZZZZZZZZZZZZZZZZZZZZZZZ',
    name: 'Inbox',
    email: 'in@example.com',
    config: { host: 'imap.invalid', port: 993, username: 'u', password: 'p' },
    webhook: { url: 'https://hooks.example.com/x', headers: { 'X-A': 'b' } },
  }),
  '/v1/mailer/sparkpost': () => ({
    mailer_id: 'sparkpost_01JZZZZZZZZZZZZZZZZZZZZZZZ',
    name: 'SparkPost',
    email: 'news@example.com',
    config: { api_key: 'k', base_url: 'https://sparkpost.invalid' },
  }),
  '/v1/domain/add': () => ({
    domain: 'fuzz.example',
    selector: 's1',
    ips: ['192.0.2.1'],
    custom_args: { a: 1 },
  }),
  '/admin/v1/tenants': () => ({ name: 'Fuzz tenant', tier: 'standard' }),
  '/v1/email/unsubscribe': () => ({ email: 'someone@example.com' }),
  '/v1/suppressions': () => ({ emails: ['someone@example.com', 'Other+tag@example.org'], reason: 'manual' }),
};
SEEDS['/v1/smtpbasic/verify'] = SEEDS['/v1/mailer/smtp']!;
SEEDS['/v1/imapbasic/verify'] = SEEDS['/v1/mailer/imap']!;
SEEDS['/v1/email/subscribe'] = SEEDS['/v1/email/unsubscribe']!;

const QUERY_NAMES = [
  'pageSize',
  'pageToken',
  'refId',
  'subject',
  'campaignId',
  'email',
  'domain',
  'status',
  'recipientType',
  'startDate',
  'endDate',
  'deliveredStartDate',
  'deliveredEndDate',
  'reason',
  'x',
];

/** Raw (already URL-encoded) path/query pieces: good, odd and hostile. */
const URL_VALUES = [
  'template_01JZZZZZZZZZZZZZZZZZZZZZZZ',
  'smtp_01JZZZZZZZZZZZZZZZZZZZZZZZ',
  'example.com',
  'xn--bcher-kva.example',
  '%00',
  'a%00b',
  '%ZZ',
  '%E0%A4%A',
  '%ED%A0%80',
  '%F0%9F%98%80',
  'b%C3%BCcher.example',
  '..',
  '%2F',
  '%2e%2e',
  '-1',
  '0',
  '51',
  '1e3',
  'NaN',
  '2024-13-45',
  '2024-01-01',
  'QUEUED',
  'queued',
  'to',
  'eyJ2IjoxLCJhZnRlciI6ImFcdTAwMDAifQ',
  'eyJ2IjoxLCJhZnRlciI6MX0',
  'x'.repeat(3000),
  '%20',
  '+',
  "'%20OR%201=1--",
];

const pick = <T>(rnd: () => number, list: readonly T[]): T => list[Math.floor(rnd() * list.length)]!;

function oddString(rnd: () => number): string {
  switch (Math.floor(rnd() * 12)) {
    case 0:
      return 'a\u0000b';
    case 1:
      return 'x\ud800y';
    case 2:
      return '\udc00';
    case 3:
      return 'x'.repeat(Math.floor(rnd() * 300_000));
    case 4:
      return '\r\nBcc: evil@example.com';
    case 5:
      return '😀'.repeat(50);
    case 6:
      return '';
    case 7:
      return ' ';
    case 8:
      return '{{name}}'.repeat(100);
    case 9:
      return '\u202e\u2028\u0085';
    case 10:
      return 'user@[127.0.0.1]';
    default:
      return String(rnd());
  }
}

/** A random JSON value (bounded depth). */
function randomValue(rnd: () => number, depth = 0): unknown {
  const k = Math.floor(rnd() * (depth > 4 ? 6 : 9));
  switch (k) {
    case 0:
      return null;
    case 1:
      return rnd() < 0.5;
    case 2:
      return pick(rnd, [0, -1, 1.5, 1e308, -0, 2 ** 53 + 1, 65536, 993]);
    case 3:
    case 4:
      return oddString(rnd);
    case 5:
      return pick(rnd, ['Auto', 'SSL', 'text/html', 'a@example.org', 'standard', 'inline']);
    case 6:
      return Array.from({ length: Math.floor(rnd() * 4) }, () => randomValue(rnd, depth + 1));
    default: {
      const o: Record<string, unknown> = {};
      for (let i = Math.floor(rnd() * 4); i > 0; i--)
        o[pick(rnd, ['a', 'name', 'email', 'to', '__proto__', 'constructor', '\u0000', ''])] = randomValue(
          rnd,
          depth + 1,
        );
      return o;
    }
  }
}

/** Replaces, removes or adds one field somewhere inside `value`. */
function mutate(rnd: () => number, value: unknown, depth = 0): unknown {
  if (Array.isArray(value)) {
    if (value.length === 0 || rnd() < 0.2) return [...value, randomValue(rnd)];
    const i = Math.floor(rnd() * value.length);
    const copy = [...value];
    copy[i] = rnd() < 0.5 && depth < 6 ? mutate(rnd, copy[i], depth + 1) : randomValue(rnd);
    return copy;
  }
  if (value !== null && typeof value === 'object') {
    const copy: Record<string, unknown> = { ...(value as Record<string, unknown>) };
    const keys = Object.keys(copy);
    const r = rnd();
    if (keys.length === 0 || r < 0.1)
      copy[pick(rnd, ['extra', 'name', 'config', 'x\u0000'])] = randomValue(rnd);
    else {
      const key = pick(rnd, keys);
      if (r < 0.25) delete copy[key];
      else copy[key] = rnd() < 0.6 && depth < 6 ? mutate(rnd, copy[key], depth + 1) : randomValue(rnd);
    }
    return copy;
  }
  return randomValue(rnd);
}

function rawBody(rnd: () => number, seed: unknown): Buffer {
  const text = JSON.stringify(seed) ?? 'null';
  switch (Math.floor(rnd() * 10)) {
    case 0:
      return Buffer.from(text.slice(0, Math.floor(rnd() * text.length)));
    case 1:
      return Buffer.from(Array.from({ length: 64 }, () => Math.floor(rnd() * 256)));
    case 2:
      return Buffer.from(`${'['.repeat(100 + Math.floor(rnd() * 5000))}1`);
    case 3:
      return Buffer.from(`{"custom_args":${'{"a":'.repeat(3000)}1${'}'.repeat(3000)}}`);
    case 4:
      return Buffer.from(`[${'{},'.repeat(30_000 + Math.floor(rnd() * 90_000))}{}]`);
    case 5:
      return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)]);
    case 6:
      return Buffer.from(text.replace(/"/, '"\\ud800'));
    case 7:
      return Buffer.from(text.replace(/:"/, ':"\\u0000'));
    case 8:
      // Empty, or just over the 1 MB default limit.
      return rnd() < 0.5 ? Buffer.from('') : Buffer.from(JSON.stringify({ name: 'x'.repeat(1100 * 1024) }));
    default:
      return Buffer.concat([Buffer.from(text), Buffer.from([0xff, 0xfe])]);
  }
}

const CONTENT_TYPES = [
  'text/plain',
  'application/x-www-form-urlencoded',
  'application/json; charset=latin1',
  'application/merge-patch+json',
  '',
  'application/json; charset="utf-8"',
  'multipart/form-data; boundary=x',
];
const ENCODINGS = ['gzip', 'br', 'deflate', 'compress', 'gzip, br', 'identity', 'x-gzip'];

export interface FuzzKeys {
  tenant: string;
  admin: string;
}

/** The `n`-th request of a run: route round-robin, everything else drawn from `rnd`. */
export function fuzzRequest(rnd: () => number, route: RouteInfo, keys: FuzzKeys): RawRequest {
  const path = route.path.replace(/:(\w+)/g, () => pick(rnd, URL_VALUES));
  let query = '';
  if (rnd() < 0.5) {
    const parts: string[] = [];
    for (let i = 1 + Math.floor(rnd() * 4); i > 0; i--)
      parts.push(`${pick(rnd, QUERY_NAMES)}=${pick(rnd, URL_VALUES)}`);
    query = `?${parts.join('&')}`;
  }
  const headers: Record<string, string> = {};
  const auth = rnd();
  const admin = route.path.startsWith('/admin');
  if (auth < 0.8) headers.Authorization = `Bearer ${admin ? keys.admin : keys.tenant}`;
  else if (auth < 0.9) headers['X-API-Key'] = pick(rnd, [keys.tenant, 'myk_nope', 'x'.repeat(300)]);

  let body: Buffer | undefined;
  const wantsBody = route.method === 'POST' || route.method === 'PUT' || rnd() < 0.1;
  if (wantsBody) {
    const seed = SEEDS[route.path]?.() ?? randomValue(rnd);
    const shape = rnd();
    if (shape < 0.15) body = Buffer.from(JSON.stringify(seed));
    else if (shape < 0.7) {
      let v = seed;
      for (let i = 1 + Math.floor(rnd() * 3); i > 0; i--) v = mutate(rnd, v);
      body = Buffer.from(JSON.stringify(v) ?? 'null');
    } else if (shape < 0.8) body = Buffer.from(JSON.stringify(randomValue(rnd)) ?? 'null');
    else body = rawBody(rnd, seed);
    headers['Content-Type'] = rnd() < 0.85 ? 'application/json' : pick(rnd, CONTENT_TYPES);
    if (rnd() < 0.15) {
      const encoding = pick(rnd, ENCODINGS);
      headers['Content-Encoding'] = encoding;
      const valid = rnd() < 0.5;
      if (valid && (encoding === 'gzip' || encoding === 'x-gzip')) body = gzipSync(body);
      else if (valid && encoding === 'br') body = brotliCompressSync(body);
      else if (valid && encoding === 'deflate') body = deflateSync(body);
    }
  }
  return { method: route.method, path: path + query, headers, body };
}
