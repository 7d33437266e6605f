import { z } from 'zod';
import { RelayWebhookSchema, UpdateInboundDomainSchema } from '../api/inbound';
import { CreateImapMailerSchema, UpdateImapMailerSchema } from '../api/mailers';
import { RegisterWebhookSchema, UpdateWebhookSchema } from '../api/webhooks';
import { MailerWebhookMessageSchema } from '../bus/mailer-webhook';
import {
  RESERVED_WEBHOOK_HEADERS,
  SERVICE_DELIVERY_HEADERS,
  WEBHOOK_HEADERS_MAX,
  WEBHOOK_HEADER_NAME_MAX,
  WEBHOOK_HEADER_VALUE_MAX,
  WebhookHeaderText,
  checkWebhookHeaders,
  isReservedWebhookHeader,
  isWebhookHeaderName,
  webhookHeadersSchema,
} from './webhook-headers';

const T = WebhookHeaderText;
const many = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`X-H${i}`, 'v']));

/** Every way a header set can be wrong, and the message it gets (field `headers`). */
const BAD: Array<[string, unknown, string]> = [
  // The request's framing and the service's own headers.
  ...[
    'Content-Type',
    'content-length',
    'CONTENT-ENCODING',
    'Transfer-Encoding',
    'transfer-encoding',
    'Connection',
    'Proxy-Connection',
    'Host',
    'HOST',
    'Keep-Alive',
    'Upgrade',
    'HTTP2-Settings',
    'TE',
    'Trailer',
    'Expect',
    'traceparent',
    'tracestate',
    'webhook-id',
    'Webhook-Timestamp',
    'webhook-signature',
    'WebHook-Signature',
    'TraceParent',
    'X-History-Backfill-Job-Id',
    'x-history-backfill-job-id',
  ].map((name): [string, unknown, string] => [
    `reserved ${name}`,
    { [name]: 'x' },
    T.reserved('headers', name),
  ]),
  // Names that are not HTTP tokens, or too long.
  ...['', 'X A', 'X:A', 'X\r\nA', 'X\nA', 'X\u0000A', 'X\u0001', 'X\u007f', 'Ä', 'X(A)', 'X/A', 'X"A', 'X@A']
    .concat(['X[A]', 'X{A}', 'X=A', 'X;A', 'X,A', 'X?A', 'X\\A', '\tX', 'X-🎉'])
    .map((name): [string, unknown, string] => [
      `name ${JSON.stringify(name)}`,
      { [name]: 'x' },
      T.name('headers'),
    ]),
  ['name of 257 characters', { ['x'.repeat(WEBHOOK_HEADER_NAME_MAX + 1)]: 'v' }, T.name('headers')],
  ['name __proto__ (no object keeps it)', JSON.parse('{"__proto__": "x"}'), T.name('headers')],
  // Values: control characters, non-ASCII, too long, not strings.
  ...[
    'a\r\nInjected: 1',
    'a\rb',
    'a\nb',
    '\u0000',
    'a\u0000b',
    'a\u0001b',
    'a\u001fb',
    'a\u007fb',
    '\u0085',
    '\u2028',
    'é',
    '€',
    '🎉',
    'x'.repeat(WEBHOOK_HEADER_VALUE_MAX + 1),
    1,
    null,
    true,
    {},
    ['a'],
  ].map((value): [string, unknown, string] => [
    `value ${JSON.stringify(value)?.slice(0, 20)}`,
    { 'X-A': value },
    T.value('headers', 'X-A'),
  ]),
  // The set itself.
  ['a string', 'X-A: 1', T.invalid('headers')],
  ['a number', 5, T.invalid('headers')],
  ['an array', [['X-A', '1']], T.invalid('headers')],
  ['null', null, T.invalid('headers')],
  ['51 headers', many(WEBHOOK_HEADERS_MAX + 1), T.tooMany('headers')],
  ['a name twice (any case)', { 'X-A': '1', 'x-a': '2' }, T.twice('headers', 'x-a')],
];

const GOOD: Array<[string, Record<string, string>]> = [
  ['none', {}],
  ['a credential', { Authorization: 'Bearer abc.def', 'X-Api-Key': 'k' }],
  ['User-Agent (sent verbatim, not reserved)', { 'User-Agent': 'my-receiver-check/2' }],
  ['every token character', { "!#$%&'*+.^_`|~0-9A-Za-z-": 'v' }],
  ['printable ASCII, spaces and tabs', { 'X-A': ' !"#~ \tx ' }],
  ['an empty value', { 'X-A': '' }],
  ['50 headers', many(WEBHOOK_HEADERS_MAX)],
  ['a 256-character name', { ['x'.repeat(WEBHOOK_HEADER_NAME_MAX)]: 'v' }],
  ['an 8192-character value', { 'X-A': 'v'.repeat(WEBHOOK_HEADER_VALUE_MAX) }],
];

describe('checkWebhookHeaders', () => {
  it(`has ${BAD.length} bad cases`, () => expect(BAD.length).toBeGreaterThanOrEqual(41));

  it.each(BAD)('refuses %s', (_case, input, error) => {
    expect(checkWebhookHeaders(input)).toEqual({ ok: false, error });
  });

  it.each(GOOD)('accepts %s verbatim', (_case, input) => {
    const r = checkWebhookHeaders(input);
    expect(r).toEqual({ ok: true, headers: input });
    if (r.ok) expect(r.headers).not.toBe(input);
  });

  it('names the field as the request wrote it, and never echoes a value', () => {
    expect(checkWebhookHeaders({ Host: 'x' }, 'webhook.headers')).toEqual({
      ok: false,
      error: 'webhook.headers.Host cannot be set: the service sets this header',
    });
    const r = checkWebhookHeaders({ 'X-Token': 's3cret\u0001' }, 'webhook.headers');
    expect(r).toEqual({
      ok: false,
      error:
        'webhook.headers.X-Token must be a string of printable ASCII characters without control characters (at most 8192)',
    });
    expect(JSON.stringify(r)).not.toContain('s3cret');
    expect(checkWebhookHeaders(7, 'webhook.headers')).toEqual({
      ok: false,
      error: 'webhook.headers must be an object of strings',
    });
    expect(T.tooMany('headers')).toBe('headers may hold at most 50 entries');
    expect(T.name('headers')).toBe('headers names must be HTTP header names (at most 256 characters)');
    expect(T.twice('headers', 'X-A')).toBe('headers.X-A is given twice');
    expect(T.neededAgain('headers', 'webhook_url')).toBe(
      'headers is required when webhook_url changes scheme, host or port: the stored headers are not sent to a new destination',
    );
  });

  it('the first problem wins, in the order of the rules', () => {
    // Too many wins over a bad name among them.
    expect(checkWebhookHeaders({ ...many(WEBHOOK_HEADERS_MAX), 'Bad Name': 'x' })).toEqual({
      ok: false,
      error: T.tooMany('headers'),
    });
    // Name before value, reserved before value, the first header before the next.
    expect(checkWebhookHeaders({ 'Bad Name': '\u0000' })).toEqual({ ok: false, error: T.name('headers') });
    expect(checkWebhookHeaders({ Host: '\u0000' })).toEqual({
      ok: false,
      error: T.reserved('headers', 'Host'),
    });
    expect(checkWebhookHeaders({ 'X-A': '\u0000', Host: 'x' })).toEqual({
      ok: false,
      error: T.value('headers', 'X-A'),
    });
  });

  it('reserves exactly the documented names, in any case', () => {
    for (const name of RESERVED_WEBHOOK_HEADERS) {
      expect(name).toBe(name.toLowerCase());
      expect(isReservedWebhookHeader(name.toUpperCase())).toBe(true);
    }
    for (const name of [
      'User-Agent',
      'user-agent',
      'Authorization',
      'X-Content-Type',
      'Hosts',
      'Content',
      'webhook',
    ])
      expect(isReservedWebhookHeader(name)).toBe(false);
    expect(isWebhookHeaderName('X-A')).toBe(true);
    expect(isWebhookHeaderName('x'.repeat(257))).toBe(false);
  });
});

describe('webhookHeadersSchema: the one rule in every webhook kind', () => {
  // Each request body (and the bus message) with `headers` at the place its kind takes them.
  const kinds: Array<[string, z.ZodTypeAny, (h: unknown) => unknown, string]> = [
    [
      'tenant webhook register',
      RegisterWebhookSchema,
      (headers) => ({ webhook_url: 'https://h.example/x', event: 'EMAIL_EVENT', method: 'POST', headers }),
      'headers',
    ],
    [
      'tenant webhook update',
      UpdateWebhookSchema,
      (headers) => ({ event: 'EMAIL_EVENT', headers }),
      'headers',
    ],
    [
      'inbound route',
      RelayWebhookSchema,
      (headers) => ({ domain: 'example.com', url: 'https://h.example/x', method: 'POST', headers }),
      'headers',
    ],
    ['inbound route update', UpdateInboundDomainSchema, (headers) => ({ headers }), 'headers'],
    [
      'IMAP mailer create / verify',
      CreateImapMailerSchema,
      (headers) => ({
        name: 'n',
        email: 'a@example.com',
        config: { host: 'imap.example.com', username: 'u', password: 'p' },
        webhook: { url: 'https://h.example/x', headers },
      }),
      'webhook.headers',
    ],
    [
      'IMAP mailer update',
      UpdateImapMailerSchema,
      (headers) => ({ mailer_id: 'basic_imap_x', webhook: { url: 'https://h.example/x', headers } }),
      'webhook.headers',
    ],
    [
      'a delivery’s own headers (bus)',
      MailerWebhookMessageSchema,
      (headers) => ({ mailer_id: 'm', event: 'INCOMING_EMAIL', body: {}, headers }),
      'headers',
    ],
  ];

  /** The service's own delivery headers (X-History-Backfill-Job-Id), which only the bus message may carry. */
  const isServiceHeader = (input: unknown) =>
    typeof input === 'object' &&
    input !== null &&
    Object.keys(input).some((n) => SERVICE_DELIVERY_HEADERS.includes(n.toLowerCase()));

  it.each(kinds)('%s refuses every bad case with the rule’s message', (_kind, schema, body, field) => {
    // `headers: null` is "not given" where the spec's payloads say so (tenant webhooks, inbound).
    const nullIsAbsent = field === 'headers' && schema !== MailerWebhookMessageSchema;
    for (const [, input, error] of BAD) {
      if (input === null && nullIsAbsent) continue;
      if (schema === MailerWebhookMessageSchema && isServiceHeader(input)) continue;
      const r = schema.safeParse(body(input));
      const want = error.replace(/^headers/, field);
      expect({ input, error: r.success ? 'accepted' : r.error.issues[0]?.message }).toEqual({
        input,
        error: want,
      });
    }
  });

  it.each(kinds)('%s accepts the good cases verbatim', (_kind, schema, body) => {
    for (const [, input] of GOOD) {
      const r = schema.safeParse(body(input));
      expect(r.success).toBe(true);
      const data = r.data as { headers?: unknown; webhook?: { headers?: unknown } };
      expect(data.webhook?.headers ?? data.headers).toEqual(input);
    }
  });

  it('X-History-Backfill-Job-Id: the service’s delivery header on the bus, refused from every tenant', () => {
    const bus = MailerWebhookMessageSchema.safeParse({
      mailer_id: 'm',
      event: 'INCOMING_EMAIL',
      body: {},
      headers: { 'X-History-Backfill-Job-Id': 'job_1' },
    });
    expect(bus.success && bus.data.headers).toEqual({ 'X-History-Backfill-Job-Id': 'job_1' });
    expect(checkWebhookHeaders({ 'x-history-backfill-job-id': 'j' }, 'headers', { delivery: true })).toEqual({
      ok: true,
      headers: { 'x-history-backfill-job-id': 'j' },
    });
    // The other reserved names stay reserved for the service's own headers too.
    expect(checkWebhookHeaders({ 'webhook-id': 'j' }, 'headers', { delivery: true })).toEqual({
      ok: false,
      error: T.reserved('headers', 'webhook-id'),
    });
    expect(checkWebhookHeaders({ 'X-History-Backfill-Job-Id': 'j' })).toEqual({
      ok: false,
      error: T.reserved('headers', 'X-History-Backfill-Job-Id'),
    });
  });

  it('describes the rule in the JSON Schema side (OpenAPI) and leaves an omitted set omitted', () => {
    expect(webhookHeadersSchema().description).toMatch(/at most 50; names are HTTP tokens/);
    expect(webhookHeadersSchema().description).toContain(
      '; reserved (in any case): content-type, content-length, ',
    );
    expect(webhookHeadersSchema().description).toContain('A custom User-Agent replaces the service');
    expect(z.object({ h: webhookHeadersSchema().optional() }).parse({})).toEqual({});
    // The field is `headers` unless named; the issue is zod's custom one, at the field's path.
    const r = z.object({ h: webhookHeadersSchema() }).safeParse({ h: { Host: 'x' } });
    expect(r.error?.issues).toEqual([
      { code: 'custom', path: ['h'], message: 'headers.Host cannot be set: the service sets this header' },
    ]);
  });
});
