import { randomBytes } from 'node:crypto';
import {
  type BusEnvelope,
  Exchange,
  RoutingKey,
  SEND_EMAIL_COMMAND,
  type SendEmailCommand,
} from '@mailyard/contracts';
import { OutboxRelay, createLogger } from '@mailyard/platform';
import request from 'supertest';
import { type Mode, useGateway } from './harness';
import { addDomainMailer, addServerMailer } from './mailers.fixture';

const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;
const CONTROL_MESSAGE = 'must not contain line breaks or other control characters';
const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64');

type Body = Record<string, unknown>;

/** POST /v1/email/send: validation, template and mailer rules, durable accept, idempotency. */
export function describeSendApi(mode: Mode): void {
  describe(`send API (${mode})`, () => {
    // Many requests per test: the per-tenant rate limit is not what this suite is about.
    const gw = useGateway(mode, { RATE_LIMIT_STANDARD: '1000000' });
    const m: Record<string, string> = {};

    beforeAll(async () => {
      const ctx = gw.ctx;
      m.domain = await addDomainMailer(ctx, gw.tenantId, 'example.com');
      m.idn = await addDomainMailer(ctx, gw.tenantId, 'xn--mller-kva.example');
      m.unverified = await addDomainMailer(ctx, gw.tenantId, 'unverified.test', { verified: false });
      m.disabled = await addDomainMailer(ctx, gw.tenantId, 'disabled.test', { state: 'disabled' });
      m.deletedDomain = await addDomainMailer(ctx, gw.tenantId, 'gone.test', { deleted: true });
      m.smtp = await addServerMailer(ctx, gw.tenantId, { configType: 'basic_smtp' });
      m.deactivated = await addServerMailer(ctx, gw.tenantId, { configType: 'smtp', state: 'deactivated' });
      m.deletedSmtp = await addServerMailer(ctx, gw.tenantId, { configType: 'basic_smtp', deleted: true });
      m.imap = await addServerMailer(ctx, gw.tenantId, { configType: 'basic_imap' });
      m.other = await addDomainMailer(ctx, gw.otherTenantId, 'example.com');
    });

    const base = (): Body => ({
      from: { email: 'sender@example.com', name: 'Sender' },
      to: [{ email: 'alice@dest.test', name: 'Alice' }],
      mailer_id: m.domain,
      subject: 'Hello',
      content: [{ type: 'text/plain', value: 'Hi there' }],
    });
    const send = (body: unknown, opts: { key?: string; idem?: string } = {}) => {
      const r = gw.post('/v1/email/send', undefined, opts.key);
      if (opts.idem !== undefined) r.set('Idempotency-Key', opts.idem);
      return r.send(body as object);
    };
    const q = async <T = Record<string, unknown>>(sql: string, params: unknown[] = []) =>
      (await gw.ctx.db.query<T>(sql, params)).rows;
    const counts = async (refId: string) => {
      const [s] = await q<{ n: number }>('SELECT count(*)::int AS n FROM sends WHERE ref_id = $1', [refId]);
      const [l] = await q<{ n: number }>('SELECT count(*)::int AS n FROM email_logs WHERE ref_id = $1', [
        refId,
      ]);
      const [o] = await q<{ n: number }>(
        "SELECT count(*)::int AS n FROM outbox WHERE message->'payload'->>'ref_id' = $1",
        [refId],
      );
      return { sends: s!.n, logs: l!.n, outbox: o!.n };
    };

    describe('validation (400)', () => {
      const long = 'x'.repeat(11 * 1024);
      const cases: Array<[string, (b: Body) => unknown, string]> = [
        ['from missing', ({ from: _f, ...b }) => b, 'from is required'],
        ['from not an object', (b) => ({ ...b, from: 'sender@example.com' }), 'from must be an object'],
        ['from.email missing', (b) => ({ ...b, from: { name: 'x' } }), 'from.email is required'],
        [
          'from.email invalid',
          (b) => ({ ...b, from: { email: 'not-an-email' } }),
          'from.email must be a valid email address',
        ],
        ['to missing', ({ to: _t, ...b }) => b, 'to is required'],
        ['to empty', (b) => ({ ...b, to: [] }), 'to is required'],
        ['to not an array', (b) => ({ ...b, to: 'a@b.test' }), 'to must be an array'],
        [
          'to item email missing',
          (b) => ({ ...b, to: [{ email: 'a@b.test' }, { name: 'x' }] }),
          'to[1].email is required',
        ],
        [
          'to item email invalid',
          (b) => ({ ...b, to: [{ email: 'a@b.test' }, { email: 'a@@b.test' }] }),
          'to[1].email must be a valid email address',
        ],
        [
          'to domain without dot',
          (b) => ({ ...b, to: [{ email: 'root@localhost' }] }),
          'to[0].email must be a valid email address',
        ],
        [
          'to domain IP literal',
          (b) => ({ ...b, to: [{ email: 'root@[127.0.0.1]' }] }),
          'to[0].email must be a valid email address',
        ],
        [
          'to domain numeric TLD',
          (b) => ({ ...b, to: [{ email: 'root@127.0.0.1' }] }),
          'to[0].email must be a valid email address',
        ],
        [
          'to display name form',
          (b) => ({ ...b, to: [{ email: 'Alice <alice@dest.test>' }] }),
          'to[0].email must be a valid email address',
        ],
        [
          'to percent-encoded domain',
          (b) => ({ ...b, to: [{ email: 'a@ex%41mple.com' }] }),
          'to[0].email must be a valid email address',
        ],
        [
          'bcc item invalid',
          (b) => ({ ...b, bcc: [{ email: 'nope' }] }),
          'bcc[0].email must be a valid email address',
        ],
        [
          'cc item invalid',
          (b) => ({ ...b, cc: [{ email: 'x@' }] }),
          'cc[0].email must be a valid email address',
        ],
        ['mailer_id missing', ({ mailer_id: _m, ...b }) => b, 'mailer_id is required'],
        ['mailer_id empty', (b) => ({ ...b, mailer_id: ' ' }), 'mailer_id is required'],
        ['subject empty', (b) => ({ ...b, subject: '' }), 'subject is required'],
        ['subject not a string', (b) => ({ ...b, subject: 5 }), 'subject must be a string'],
        [
          'subject too long',
          (b) => ({ ...b, subject: 's'.repeat(999) }),
          'subject must be at most 998 characters',
        ],
        ['content empty', (b) => ({ ...b, content: [] }), 'content is required'],
        [
          'content type',
          (b) => ({ ...b, content: [{ type: 'application/pdf', value: 'x' }] }),
          'content type must be text/html or text/plain',
        ],
        [
          'content value missing',
          (b) => ({ ...b, content: [{ type: 'text/plain' }] }),
          'content value is required',
        ],
        [
          'content type twice',
          (b) => ({
            ...b,
            content: [
              { type: 'text/plain', value: 'a' },
              { type: 'text/plain', value: 'b' },
            ],
          }),
          'content may hold at most one text/plain and one text/html value',
        ],
        ['template_id empty', (b) => ({ ...b, template_id: '' }), 'template_id is required'],
        ['replyTo invalid', (b) => ({ ...b, replyTo: 'reply' }), 'replyTo must be a valid email address'],
        ['replyTo object', (b) => ({ ...b, replyTo: { email: 'r@dest.test' } }), 'replyTo must be a string'],
        ['headers not an object', (b) => ({ ...b, headers: ['X-A: 1'] }), 'headers must be an object'],
        [
          'header value not a string',
          (b) => ({ ...b, headers: { 'X-Num': 5 } }),
          'headers.X-Num must be a string',
        ],
        [
          'header name with space',
          (b) => ({ ...b, headers: { 'X Bad': '1' } }),
          'headers: "X Bad" is not a valid header name',
        ],
        [
          'header name with colon',
          (b) => ({ ...b, headers: { 'X-Bad:': '1' } }),
          'headers: "X-Bad:" is not a valid header name',
        ],
        [
          'header name non-ASCII',
          (b) => ({ ...b, headers: { 'X-Grüße': '1' } }),
          'headers: "X-Grüße" is not a valid header name',
        ],
        [
          'header From',
          (b) => ({ ...b, headers: { From: 'evil@x.test' } }),
          'headers.From cannot be set: the service sets this header',
        ],
        [
          'header bcc',
          (b) => ({ ...b, headers: { bcc: 'spy@x.test' } }),
          'headers.bcc cannot be set: the service sets this header',
        ],
        [
          'header Content-Type',
          (b) => ({ ...b, headers: { 'Content-Type': 'text/html' } }),
          'headers.Content-Type cannot be set: the service sets this header',
        ],
        [
          'header DKIM-Signature',
          (b) => ({ ...b, headers: { 'DKIM-Signature': 'v=1' } }),
          'headers.DKIM-Signature cannot be set: the service sets this header',
        ],
        [
          'header Return-Path',
          (b) => ({ ...b, headers: { 'Return-Path': '<x@y.test>' } }),
          'headers.Return-Path cannot be set: the service sets this header',
        ],
        [
          'header MIME-Version',
          (b) => ({ ...b, headers: { 'MIME-Version': '1.0' } }),
          'headers.MIME-Version cannot be set: the service sets this header',
        ],
        [
          'header Date',
          (b) => ({ ...b, headers: { Date: 'now' } }),
          'headers.Date cannot be set: the service sets this header',
        ],
        [
          'header Subject',
          (b) => ({ ...b, headers: { Subject: 'x' } }),
          'headers.Subject cannot be set: the service sets this header',
        ],
        [
          'header twice',
          (b) => ({ ...b, headers: { 'X-A': '1', 'x-a': '2' } }),
          'headers.x-a is given more than once',
        ],
        [
          'Message-ID with spaces',
          (b) => ({ ...b, headers: { 'Message-ID': 'a b' } }),
          'headers.Message-ID must be 1 to 255 printable ASCII characters without spaces',
        ],
        [
          'attachment filename missing',
          (b) => ({ ...b, attachments: [{ content: b64('x') }] }),
          'attachments[0].filename is required',
        ],
        [
          'attachment content missing',
          (b) => ({ ...b, attachments: [{ filename: 'a.txt' }] }),
          'attachments[0].content is required',
        ],
        [
          'attachment content empty',
          (b) => ({ ...b, attachments: [{ filename: 'a.txt', content: '' }] }),
          'attachments[0].content is required',
        ],
        [
          'attachment not base64',
          (b) => ({ ...b, attachments: [{ filename: 'a.txt', content: 'not base64!' }] }),
          'attachments[0].content must be valid base64',
        ],
        [
          'attachment base64url',
          (b) => ({ ...b, attachments: [{ filename: 'a', content: 'ab-_' }] }),
          'attachments[0].content must be valid base64',
        ],
        [
          'attachment bad padding',
          (b) => ({ ...b, attachments: [{ filename: 'a', content: 'YQ=' }] }),
          'attachments[0].content must be valid base64',
        ],
        [
          'attachment disposition',
          (b) => ({ ...b, attachments: [{ filename: 'a', content: b64('x'), disposition: 'embedded' }] }),
          'attachments[0].disposition must be one of attachment, inline',
        ],
        [
          'inline without content_id',
          (b) => ({ ...b, attachments: [{ filename: 'a.png', content: b64('x'), disposition: 'inline' }] }),
          'attachments[0].content_id is required for inline attachments',
        ],
        [
          'attachment type',
          (b) => ({ ...b, attachments: [{ filename: 'a', content: b64('x'), type: 'pdf' }] }),
          'attachments[0].type must be a MIME type such as application/pdf',
        ],
        [
          'content_id with brackets',
          (b) => ({ ...b, attachments: [{ filename: 'a', content: b64('x'), content_id: '<logo>' }] }),
          'attachments[0].content_id must be 1 to 255 characters without spaces, < or >',
        ],
        ['settings not an object', (b) => ({ ...b, settings: true }), 'settings must be an object'],
        [
          'open_tracking.enable not boolean',
          (b) => ({ ...b, settings: { open_tracking: { enable: 'yes' } } }),
          'settings.open_tracking.enable must be a boolean',
        ],
        [
          'click_tracking.enable missing',
          (b) => ({ ...b, settings: { click_tracking: {} } }),
          'settings.click_tracking.enable is required',
        ],
        ['campaign_id not a string', (b) => ({ ...b, campaign_id: 7 }), 'campaign_id must be a string'],
        ['custom_args array', (b) => ({ ...b, custom_args: [1] }), 'custom_args must be an object'],
        [
          'custom_args over 10 KB',
          (b) => ({ ...b, custom_args: { blob: long } }),
          'custom_args must be at most 10 KB when serialized',
        ],
        [
          'substitutions key not an address',
          (b) => ({ ...b, substitutions: { alice: { name: 'A' } } }),
          'substitutions keys must be recipient email addresses (got "alice")',
        ],
        [
          'substitutions value object',
          (b) => ({ ...b, substitutions: { 'alice@dest.test': { name: { first: 'A' } } } }),
          'substitutions.alice@dest.test.name must be a string, number or boolean',
        ],
        [
          'duplicate recipient across to and bcc',
          (b) => ({ ...b, bcc: [{ email: 'ALICE@dest.test' }] }),
          'each recipient may appear only once across to, cc and bcc',
        ],
      ];
      it.each(cases)('%s', async (_name, mutate, message) => {
        const res = await send(mutate(base()));
        expect(res.status).toBe(400);
        expect(res.body).toMatchObject({ success: false, error: message });
      });

      it('answers a non-object body and a missing body with the envelope', async () => {
        const str = await gw.post('/v1/email/send').set('Content-Type', 'application/json').send('"x"');
        expect(str.status).toBe(400);
        expect(str.body).toEqual({ success: false, error: 'body must be an object' });
        const none = await gw.post('/v1/email/send');
        expect(none.status).toBe(400);
        expect(none.body).toMatchObject({
          success: false,
          error: 'from is required',
          details: '3 problems; first at from',
        });
      });

      it('needs an API key', async () => {
        expect((await request(gw.app).post('/v1/email/send').send(base())).status).toBe(401);
      });
    });

    describe('header injection (400)', () => {
      const inj = 'x\r\nBcc: victim@evil.test';
      const cases: Array<[string, (b: Body) => unknown, string]> = [
        ['subject CRLF', (b) => ({ ...b, subject: `Hi${inj}` }), `subject ${CONTROL_MESSAGE}`],
        ['subject LF only', (b) => ({ ...b, subject: 'Hi\nthere' }), `subject ${CONTROL_MESSAGE}`],
        // NUL is refused for every field at the edge, before the header rules.
        ['subject NUL', (b) => ({ ...b, subject: 'Hi\u0000' }), 'subject must not contain NUL characters'],
        ['subject TAB', (b) => ({ ...b, subject: 'Hi\tthere' }), `subject ${CONTROL_MESSAGE}`],
        ['subject U+2028', (b) => ({ ...b, subject: 'Hi\u2028there' }), `subject ${CONTROL_MESSAGE}`],
        ['subject C1 NEL', (b) => ({ ...b, subject: 'Hi\u0085there' }), `subject ${CONTROL_MESSAGE}`],
        [
          'from.name',
          (b) => ({ ...b, from: { email: 'sender@example.com', name: `S${inj}` } }),
          `from.name ${CONTROL_MESSAGE}`,
        ],
        [
          'from.email',
          (b) => ({ ...b, from: { email: `sender@example.com${inj}` } }),
          `from.email ${CONTROL_MESSAGE}`,
        ],
        [
          'to[0].name',
          (b) => ({ ...b, to: [{ email: 'a@dest.test', name: `A${inj}` }] }),
          `to[0].name ${CONTROL_MESSAGE}`,
        ],
        [
          'to[0].email',
          (b) => ({ ...b, to: [{ email: 'a@dest.test\r\n' }] }),
          `to[0].email ${CONTROL_MESSAGE}`,
        ],
        [
          'bcc[0].name',
          (b) => ({ ...b, bcc: [{ email: 'b@dest.test', name: 'B\r' }] }),
          `bcc[0].name ${CONTROL_MESSAGE}`,
        ],
        ['replyTo', (b) => ({ ...b, replyTo: `r@dest.test${inj}` }), `replyTo ${CONTROL_MESSAGE}`],
        [
          'custom header value',
          (b) => ({ ...b, headers: { 'X-Tag': `v${inj}` } }),
          `headers.X-Tag ${CONTROL_MESSAGE}`,
        ],
        [
          'custom header name',
          (b) => ({ ...b, headers: { 'X-Tag\r\nBcc': 'v' } }),
          'headers: "X-Tag\\r\\nBcc" is not a valid header name',
        ],
        [
          'In-Reply-To value',
          (b) => ({ ...b, headers: { 'In-Reply-To': `<a@b>${inj}` } }),
          `headers.In-Reply-To ${CONTROL_MESSAGE}`,
        ],
        [
          'Message-ID value',
          (b) => ({ ...b, headers: { 'Message-ID': 'abc\n' } }),
          `headers.Message-ID ${CONTROL_MESSAGE}`,
        ],
        [
          'attachment filename',
          (b) => ({ ...b, attachments: [{ filename: `a${inj}.txt`, content: b64('x') }] }),
          `attachments[0].filename ${CONTROL_MESSAGE}`,
        ],
        [
          'attachment type',
          (b) => ({ ...b, attachments: [{ filename: 'a', content: b64('x'), type: `text/plain${inj}` }] }),
          `attachments[0].type ${CONTROL_MESSAGE}`,
        ],
        [
          'attachment content_id',
          (b) => ({
            ...b,
            attachments: [
              { filename: 'a', content: b64('x'), disposition: 'inline', content_id: `logo${inj}` },
            ],
          }),
          `attachments[0].content_id ${CONTROL_MESSAGE}`,
        ],
        ['campaign_id', (b) => ({ ...b, campaign_id: `c${inj}` }), `campaign_id ${CONTROL_MESSAGE}`],
      ];
      it.each(cases)('%s', async (_name, mutate, message) => {
        const res = await send(mutate(base()));
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ success: false, error: message });
      });
    });

    describe('recipient and size limits', () => {
      const many = (n: number, domain = 'many.test') =>
        Array.from({ length: n }, (_, i) => ({ email: `r${i}@${domain}` }));

      it('accepts 1000 recipients and refuses 1001 (to + cc + bcc)', async () => {
        const ok = await send({ ...base(), to: many(998), cc: many(1, 'cc.test'), bcc: many(1, 'bcc.test') });
        expect(ok.status).toBe(200);
        expect((await counts(ok.body.ref_id)).logs).toBe(1000);
        const over = await send({
          ...base(),
          to: many(999),
          cc: many(1, 'cc.test'),
          bcc: many(1, 'bcc.test'),
        });
        expect(over.status).toBe(400);
        expect(over.body).toEqual({
          success: false,
          error: 'total recipients must be at most 1000',
          details: '1001 recipients (to + cc + bcc)',
        });
      });

      it('counts cc and bcc once per copy with substitutions', async () => {
        const subs = { 'r0@many.test': { name: 'R0' } };
        const ok = await send({ ...base(), to: many(500), bcc: many(1, 'bcc.test'), substitutions: subs });
        expect(ok.status).toBe(200);
        expect(await counts(ok.body.ref_id)).toEqual({ sends: 1, logs: 1000, outbox: 500 });
        const over = await send({ ...base(), to: many(501), bcc: many(1, 'bcc.test'), substitutions: subs });
        expect(over.status).toBe(400);
        expect(over.body.error).toBe('total recipients must be at most 1000');
        expect(over.body.details).toBe(
          '1002 recipients (with substitutions every copy counts its to, cc and bcc recipients)',
        );
      });

      it('accepts exactly 30 MB and refuses more (decoded attachments + bodies) with 413, at the default body limit', async () => {
        const mb = 1024 * 1024;
        const atLimit = {
          ...base(),
          content: [
            { type: 'text/plain', value: 'x'.repeat(mb / 2) },
            { type: 'text/html', value: 'é'.repeat(mb / 4) },
          ],
          attachments: [
            { filename: 'a.bin', content: Buffer.alloc(20 * mb, 7).toString('base64') },
            {
              filename: 'b.bin',
              content: Buffer.alloc(9 * mb, 8).toString('base64'),
              disposition: 'inline',
              content_id: 'b',
            },
          ],
        };
        const ok = await send(atLimit);
        expect(ok.status).toBe(200);
        const [row] = await q<{ n: number }>(
          "SELECT length(request->'attachments'->0->>'content')::int AS n FROM sends WHERE ref_id = $1",
          [ok.body.ref_id],
        );
        expect(row!.n).toBe(Math.ceil((20 * mb) / 3) * 4);
        const over = {
          ...atLimit,
          content: [...atLimit.content.slice(0, 1), { type: 'text/html', value: `${'é'.repeat(mb / 4)}!` }],
        };
        const res = await send(over);
        expect(res.status).toBe(413);
        expect(res.body).toEqual({ success: false, error: 'message size must be at most 30 MB' });
      });

      it('counts template bodies towards the 30 MB', async () => {
        const mb = 1024 * 1024;
        // Template bodies are limited by the 1 MB default body limit (HTTP_BODY_LIMIT).
        const templateBytes = mb - 4096;
        const t = await gw.post('/v1/email/template', {
          name: 'big',
          subject: 'S',
          content: [{ type: 'text/plain', value: 'x'.repeat(templateBytes) }],
        });
        expect(t.status).toBe(201);
        const { content: _c, ...b } = base();
        const body = {
          ...b,
          template_id: t.body.template_id,
          attachments: [
            { filename: 'a', content: Buffer.alloc(30 * mb - templateBytes + 1).toString('base64') },
          ],
        };
        const res = await send(body);
        expect(res.status).toBe(413);
        expect(res.body).toEqual({ success: false, error: 'message size must be at most 30 MB' });
      });
    });

    describe('templates at accept', () => {
      let templateId: string;
      beforeAll(async () => {
        const res = await gw.post('/v1/email/template', {
          name: 'T',
          subject: 'Hello {{name}}',
          content: [{ type: 'text/html', value: '<p>Hi {{name}}</p>' }],
        });
        templateId = res.body.template_id;
      });
      const stored = async (refId: string) =>
        (
          await q<{ request: Body; subject: string }>(
            'SELECT s.request, l.subject FROM sends s JOIN email_logs l ON l.ref_id = s.ref_id WHERE s.ref_id = $1',
            [refId],
          )
        )[0]!;

      it('takes subject and content from the template when the request has none', async () => {
        const { subject: _s, content: _c, ...b } = base();
        const res = await send({ ...b, template_id: templateId });
        expect(res.status).toBe(200);
        const row = await stored(res.body.ref_id);
        expect(row.request).toMatchObject({
          template_id: templateId,
          subject: 'Hello {{name}}',
          content: [{ type: 'text/html', value: '<p>Hi {{name}}</p>' }],
        });
        expect(row.subject).toBe('Hello {{name}}');
      });

      it('lets the request override subject and content separately', async () => {
        const { content: _c, ...b } = base();
        const res = await send({ ...b, subject: 'Override', template_id: templateId });
        expect(res.status).toBe(200);
        expect((await stored(res.body.ref_id)).request).toMatchObject({
          subject: 'Override',
          content: [{ type: 'text/html', value: '<p>Hi {{name}}</p>' }],
        });
        const { subject: _s, ...b2 } = base();
        const res2 = await send({ ...b2, template_id: templateId });
        expect((await stored(res2.body.ref_id)).request).toMatchObject({
          subject: 'Hello {{name}}',
          content: [{ type: 'text/plain', value: 'Hi there' }],
        });
      });

      it('requires subject and content when no template supplies them', async () => {
        const { subject: _s, ...noSubject } = base();
        expect((await send(noSubject)).body).toEqual({ success: false, error: 'subject is required' });
        const { content: _c, ...noContent } = base();
        const res = await send(noContent);
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ success: false, error: 'content is required' });
      });

      it("404s an unknown template and another tenant's template", async () => {
        const unknown = await send({ ...base(), template_id: 'template_01HZZZZZZZZZZZZZZZZZZZZZZZ' });
        expect(unknown.status).toBe(404);
        expect(unknown.body).toEqual({ success: false, error: 'Template not found' });
        const theirs = await gw.post(
          '/v1/email/template',
          { name: 'X', subject: 'S', content: [{ type: 'text/plain', value: 'v' }] },
          gw.otherKey,
        );
        const res = await send({ ...base(), template_id: theirs.body.template_id });
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ success: false, error: 'Template not found' });
      });
    });

    describe('mailer rules', () => {
      const cases: Array<[string, () => Body, number, string]> = [
        [
          'unknown mailer',
          () => ({ ...base(), mailer_id: 'domain_01HZZZZZZZZZZZZZZZZZZZZZZZ' }),
          404,
          'Mailer not found',
        ],
        ["another tenant's mailer", () => ({ ...base(), mailer_id: m.other! }), 404, 'Mailer not found'],
        [
          'deleted domain mailer',
          () => ({ ...base(), from: { email: 'a@gone.test' }, mailer_id: m.deletedDomain! }),
          404,
          'Mailer not found',
        ],
        ['deleted SMTP mailer', () => ({ ...base(), mailer_id: m.deletedSmtp! }), 404, 'Mailer not found'],
        [
          'unverified sending domain',
          () => ({ ...base(), from: { email: 'a@unverified.test' }, mailer_id: m.unverified! }),
          422,
          'Sending domain is not verified',
        ],
        [
          'disabled mailer',
          () => ({ ...base(), from: { email: 'a@disabled.test' }, mailer_id: m.disabled! }),
          422,
          'Mailer is disabled',
        ],
        [
          'deactivated mailer',
          () => ({ ...base(), mailer_id: m.deactivated! }),
          422,
          'Mailer is deactivated',
        ],
        [
          'receive-only IMAP mailer',
          () => ({ ...base(), mailer_id: m.imap! }),
          422,
          'Mailer cannot send email',
        ],
        [
          'from outside the domain',
          () => ({ ...base(), from: { email: 'a@other.test' } }),
          422,
          'from.email must be an address of the sending domain',
        ],
        [
          'from on a look-alike domain',
          () => ({ ...base(), from: { email: 'a@notexample.com' } }),
          422,
          'from.email must be an address of the sending domain',
        ],
        [
          'from on a domain that merely starts with it',
          () => ({ ...base(), from: { email: 'a@example.com.evil.test' } }),
          422,
          'from.email must be an address of the sending domain',
        ],
      ];
      it.each(cases)('%s', async (_name, body, status, message) => {
        const res = await send(body());
        expect(res.status).toBe(status);
        expect(res.body).toMatchObject({ success: false, error: message });
      });

      it('names the expected domain in details', async () => {
        const res = await send({ ...base(), from: { email: 'a@other.test' } });
        expect(res.body.details).toBe('from.email must be @example.com or @<subdomain>.example.com');
      });

      it('accepts subdomains of the sending domain, any case, and IDN domains', async () => {
        expect((await send({ ...base(), from: { email: 'news@mail.Example.COM' } })).status).toBe(200);
        const idn = await send({ ...base(), from: { email: 'info@Müller.example' }, mailer_id: m.idn });
        expect(idn.status).toBe(200);
        const [row] = await q<{ request: { from: { email: string } } }>(
          'SELECT request FROM sends WHERE ref_id = $1',
          [idn.body.ref_id],
        );
        expect(row!.request.from.email).toBe('info@xn--mller-kva.example');
      });

      it('lets SMTP mailers send from any address', async () => {
        expect(
          (await send({ ...base(), from: { email: 'me@anywhere.test' }, mailer_id: m.smtp })).status,
        ).toBe(200);
      });

      it('writes nothing for a refused send', async () => {
        const before = await q<{ n: number }>('SELECT count(*)::int AS n FROM sends WHERE tenant_id = $1', [
          gw.tenantId,
        ]);
        await send({ ...base(), mailer_id: m.unverified });
        const after = await q<{ n: number }>('SELECT count(*)::int AS n FROM sends WHERE tenant_id = $1', [
          gw.tenantId,
        ]);
        expect(after[0]!.n).toBe(before[0]!.n);
      });
    });

    describe('accepted sends', () => {
      it('answers 200 {success, ref_id, message: "queued"} and writes sends, QUEUED logs and one outbox row per copy', async () => {
        const body = {
          ...base(),
          to: [{ email: 'alice@dest.test', name: 'Alice' }, { email: 'bob@Bücher.example' }],
          cc: [{ email: 'carol@dest.test' }],
          bcc: [{ email: 'dave@archive.test', name: null }],
          replyTo: 'reply@example.com',
          headers: {
            'X-Tag': 'welcome',
            'Message-ID': 'order-42',
            'In-Reply-To': '<a@b.test>',
            References: '<a@b.test> <c@d.test>',
          },
          attachments: [
            { filename: 'a.txt', content: 'aGVs\r\nbG8=', type: 'text/plain' },
            {
              filename: 'logo.png',
              content: b64(randomBytes(30)),
              type: 'image/png',
              disposition: 'inline',
              content_id: 'logo@x',
            },
          ],
          settings: { open_tracking: { enable: true } },
          campaign_id: 'spring',
          custom_args: { order: 42, tags: ['a'] },
          unknown_field: 'dropped',
        };
        const res = await send(body);
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ success: true, ref_id: expect.stringMatching(ULID), message: 'queued' });
        const refId: string = res.body.ref_id;

        const [s] = await q<{
          tenant_id: string;
          mailer_id: string;
          campaign_id: string;
          custom_args: unknown;
          request: Body;
          idempotency_key: null;
        }>(
          'SELECT tenant_id, mailer_id, campaign_id, custom_args, request, idempotency_key FROM sends WHERE ref_id = $1',
          [refId],
        );
        expect(s).toMatchObject({
          tenant_id: gw.tenantId,
          mailer_id: m.domain,
          campaign_id: 'spring',
          custom_args: { order: 42, tags: ['a'] },
        });
        expect(s!.idempotency_key).toBeNull();
        expect(s!.request).toEqual({
          from: { email: 'sender@example.com', name: 'Sender' },
          to: [{ email: 'alice@dest.test', name: 'Alice' }, { email: 'bob@xn--bcher-kva.example' }],
          cc: [{ email: 'carol@dest.test' }],
          bcc: [{ email: 'dave@archive.test' }],
          mailer_id: m.domain,
          subject: 'Hello',
          content: [{ type: 'text/plain', value: 'Hi there' }],
          replyTo: 'reply@example.com',
          headers: body.headers,
          attachments: [
            { filename: 'a.txt', content: 'aGVsbG8=', type: 'text/plain', disposition: 'attachment' },
            body.attachments[1],
          ],
          settings: { open_tracking: { enable: true }, click_tracking: { enable: false } },
          campaign_id: 'spring',
          custom_args: { order: 42, tags: ['a'] },
        });

        const logs = await q<Record<string, unknown>>(
          `SELECT copy_id, recipient, recipient_domain, recipient_type, status, subject, mailer_id, campaign_id, tenant_id
             FROM email_logs WHERE ref_id = $1 ORDER BY id`,
          [refId],
        );
        // Open tracking is on: every recipient gets a copy of its own (docs/tracking.md).
        const common = {
          status: 'QUEUED',
          subject: 'Hello',
          mailer_id: m.domain,
          campaign_id: 'spring',
          tenant_id: gw.tenantId,
        };
        expect(logs).toEqual([
          {
            ...common,
            copy_id: `${refId}.1`,
            recipient: 'alice@dest.test',
            recipient_domain: 'dest.test',
            recipient_type: 'to',
          },
          {
            ...common,
            copy_id: `${refId}.2`,
            recipient: 'bob@xn--bcher-kva.example',
            recipient_domain: 'xn--bcher-kva.example',
            recipient_type: 'to',
          },
          {
            ...common,
            copy_id: `${refId}.3`,
            recipient: 'carol@dest.test',
            recipient_domain: 'dest.test',
            recipient_type: 'cc',
          },
          {
            ...common,
            copy_id: `${refId}.4`,
            recipient: 'dave@archive.test',
            recipient_domain: 'archive.test',
            recipient_type: 'bcc',
          },
        ]);

        const outbox = await q<{
          exchange: string;
          routing_key: string;
          message: BusEnvelope<SendEmailCommand>;
        }>("SELECT exchange, routing_key, message FROM outbox WHERE message->'payload'->>'ref_id' = $1", [
          refId,
        ]);
        expect(outbox).toHaveLength(4);
        expect(outbox.map((o) => o.message.payload.copy_id).sort()).toEqual(
          [1, 2, 3, 4].map((n) => `${refId}.${n}`),
        );
        expect(outbox[0]).toMatchObject({
          exchange: Exchange.commands,
          routing_key: RoutingKey.sendEmail,
          message: {
            type: SEND_EMAIL_COMMAND,
            version: 1,
            tenant_id: gw.tenantId,
            payload: { ref_id: refId, tenant_id: gw.tenantId, copy_id: `${refId}.1`, attempt: 1 },
          },
        });
      });

      it('makes one copy per to recipient with substitutions, each carrying every cc and bcc', async () => {
        const res = await send({
          ...base(),
          to: [{ email: 'a1@dest.test' }, { email: 'A2@Dest.test' }, { email: 'a3@dest.test' }],
          cc: [{ email: 'cc@dest.test' }],
          bcc: [{ email: 'bcc@dest.test' }],
          substitutions: {
            'a1@dest.test': { name: 'One', n: 1, vip: true, none: null },
            'a2@DEST.test': { name: 'Two' },
          },
        });
        expect(res.status).toBe(200);
        const refId: string = res.body.ref_id;
        const logs = await q<{ copy_id: string; recipient: string; recipient_type: string }>(
          'SELECT copy_id, recipient, recipient_type FROM email_logs WHERE ref_id = $1 ORDER BY id',
          [refId],
        );
        const copy = (n: number, to: string) => [
          { copy_id: `${refId}.${n}`, recipient: to, recipient_type: 'to' },
          { copy_id: `${refId}.${n}`, recipient: 'cc@dest.test', recipient_type: 'cc' },
          { copy_id: `${refId}.${n}`, recipient: 'bcc@dest.test', recipient_type: 'bcc' },
        ];
        expect(logs).toEqual([
          ...copy(1, 'a1@dest.test'),
          ...copy(2, 'A2@dest.test'),
          ...copy(3, 'a3@dest.test'),
        ]);
        const copies = await q<{ copy_id: string }>(
          "SELECT message->'payload'->>'copy_id' AS copy_id FROM outbox WHERE message->'payload'->>'ref_id' = $1 ORDER BY id",
          [refId],
        );
        expect(copies.map((c) => c.copy_id)).toEqual([`${refId}.1`, `${refId}.2`, `${refId}.3`]);
        const [row] = await q<{ request: { substitutions: unknown } }>(
          'SELECT request FROM sends WHERE ref_id = $1',
          [refId],
        );
        expect(row!.request.substitutions).toEqual({
          'a1@dest.test': { name: 'One', n: '1', vip: 'true', none: '' },
          'a2@dest.test': { name: 'Two' },
        });
      });

      it('still accepts sends to suppressed recipients (the send service suppresses them)', async () => {
        await gw.post('/v1/email/unsubscribe', { email: 'gone@dest.test' });
        const res = await send({ ...base(), to: [{ email: 'gone@dest.test' }] });
        expect(res.status).toBe(200);
        expect(await counts(res.body.ref_id)).toEqual({ sends: 1, logs: 1, outbox: 1 });
      });

      it('writes everything in one transaction: a failing outbox insert leaves no rows', async () => {
        await gw.ctx.db.query(`CREATE OR REPLACE FUNCTION test_fail_third_copy() RETURNS trigger AS $$
          BEGIN
            IF NEW.message->'payload'->>'copy_id' LIKE '%.3' THEN RAISE EXCEPTION 'test: outbox insert refused'; END IF;
            RETURN NEW;
          END $$ LANGUAGE plpgsql`);
        await gw.ctx.db.query(
          'CREATE TRIGGER test_fail_third_copy BEFORE INSERT ON outbox FOR EACH ROW EXECUTE FUNCTION test_fail_third_copy()',
        );
        try {
          const tenant = await gw.newTenant();
          const mailer = await addDomainMailer(gw.ctx, tenant.tenantId, 'example.com');
          const to = [{ email: 'x1@dest.test' }, { email: 'x2@dest.test' }, { email: 'x3@dest.test' }];
          const res = await send(
            { ...base(), mailer_id: mailer, to, substitutions: { 'x1@dest.test': { a: 'b' } } },
            { key: tenant.apiKey },
          );
          expect(res.status).toBe(500);
          expect(res.body).toEqual({ success: false, error: 'Internal server error' });
          const rows = await q<{ s: number; l: number; o: number }>(
            `SELECT (SELECT count(*)::int FROM sends WHERE tenant_id = $1) AS s,
                    (SELECT count(*)::int FROM email_logs WHERE tenant_id = $1) AS l,
                    (SELECT count(*)::int FROM outbox WHERE message->>'tenant_id' = $1) AS o`,
            [tenant.tenantId],
          );
          expect(rows[0]).toEqual({ s: 0, l: 0, o: 0 });
        } finally {
          await gw.ctx.db.query('DROP TRIGGER test_fail_third_copy ON outbox');
          await gw.ctx.db.query('DROP FUNCTION test_fail_third_copy()');
        }
      });

      it('publishes the send.email command through the outbox relay to a queue bound to send.#', async () => {
        const relay = new OutboxRelay(gw.ctx.db, gw.ctx.bus, createLogger('relay-test', 'error'), {
          pollMs: 20,
          batchSize: 500,
        });
        const received: BusEnvelope<SendEmailCommand>[] = [];
        const consumer = await gw.ctx.bus.consume<SendEmailCommand>(
          {
            queue: `test.send-commands.${randomBytes(4).toString('hex')}`,
            bindings: [{ exchange: Exchange.commands, routingKey: 'send.#' }],
          },
          async (d) => {
            received.push(d.envelope);
          },
        );
        relay.start();
        try {
          const res = await send({
            ...base(),
            to: [{ email: 'p1@dest.test' }, { email: 'p2@dest.test' }],
            substitutions: { 'p1@dest.test': { v: '1' } },
          });
          expect(res.status).toBe(200);
          const refId: string = res.body.ref_id;
          const deadline = Date.now() + 15_000;
          const mine = () => received.filter((e) => e.payload.ref_id === refId);
          while (mine().length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
          expect(
            mine()
              .map((e) => e.payload)
              .sort((a, b) => a.copy_id.localeCompare(b.copy_id)),
          ).toEqual([
            { ref_id: refId, tenant_id: gw.tenantId, copy_id: `${refId}.1`, attempt: 1 },
            { ref_id: refId, tenant_id: gw.tenantId, copy_id: `${refId}.2`, attempt: 1 },
          ]);
          for (const e of mine())
            expect(e).toMatchObject({ type: SEND_EMAIL_COMMAND, version: 1, tenant_id: gw.tenantId });
          const [pending] = await q<{ n: number }>(
            "SELECT count(*)::int AS n FROM outbox WHERE sent_at IS NULL AND message->'payload'->>'ref_id' = $1",
            [refId],
          );
          expect(pending!.n).toBe(0);
        } finally {
          await relay.stop();
          await consumer.cancel();
        }
      });
    });

    describe('Idempotency-Key', () => {
      it('returns the first ref_id for a retry and writes nothing twice', async () => {
        const idem = `order-${randomBytes(6).toString('hex')}`;
        const first = await send(base(), { idem });
        expect(first.status).toBe(200);
        expect(first.headers['idempotent-replayed']).toBeUndefined();
        const again = await send(
          { ...base(), from: { name: 'Sender', email: 'sender@EXAMPLE.com' } },
          { idem },
        );
        expect(again.status).toBe(200);
        expect(again.body).toEqual(first.body);
        expect(again.headers['idempotent-replayed']).toBe('true');
        expect(await counts(first.body.ref_id)).toEqual({ sends: 1, logs: 1, outbox: 1 });
        const [n] = await q<{ n: number }>(
          'SELECT count(*)::int AS n FROM sends WHERE tenant_id = $1 AND idempotency_key = $2',
          [gw.tenantId, idem],
        );
        expect(n!.n).toBe(1);
      });

      it('answers a retry even after the mailer was disabled (the first result stands)', async () => {
        const mailer = await addDomainMailer(gw.ctx, gw.tenantId, 'retry.test');
        const idem = `k-${randomBytes(6).toString('hex')}`;
        const body = { ...base(), from: { email: 'a@retry.test' }, mailer_id: mailer };
        const first = await send(body, { idem });
        expect(first.status).toBe(200);
        await gw.ctx.db.query("UPDATE mailers SET state = 'disabled' WHERE id = $1", [mailer]);
        const again = await send(body, { idem });
        expect(again.status).toBe(200);
        expect(again.body.ref_id).toBe(first.body.ref_id);
        expect((await send(body)).status).toBe(422);
      });

      it('refuses the same key with a different request (422)', async () => {
        const idem = `k-${randomBytes(6).toString('hex')}`;
        const first = await send(base(), { idem });
        const res = await send({ ...base(), subject: 'Different' }, { idem });
        expect(res.status).toBe(422);
        expect(res.body).toEqual({
          success: false,
          error: 'Idempotency-Key was already used with a different request',
        });
        expect(await counts(first.body.ref_id)).toEqual({ sends: 1, logs: 1, outbox: 1 });
      });

      it('keeps keys per tenant', async () => {
        const idem = `shared-${randomBytes(6).toString('hex')}`;
        const mine = await send(base(), { idem });
        const theirs = await send({ ...base(), mailer_id: m.other }, { idem, key: gw.otherKey });
        expect(theirs.status).toBe(200);
        expect(theirs.body.ref_id).not.toBe(mine.body.ref_id);
      });

      it('treats a key older than 24 h as new and moves it to the new send', async () => {
        const idem = `old-${randomBytes(6).toString('hex')}`;
        const first = await send(base(), { idem });
        await gw.ctx.db.query(
          "UPDATE sends SET created_at = now() - interval '24 hours 1 minute' WHERE ref_id = $1",
          [first.body.ref_id],
        );
        const second = await send({ ...base(), subject: 'even a different body' }, { idem });
        expect(second.status).toBe(200);
        expect(second.body.ref_id).not.toBe(first.body.ref_id);
        const rows = await q<{ ref_id: string; idempotency_key: string | null }>(
          'SELECT ref_id, idempotency_key FROM sends WHERE ref_id = ANY($1::text[]) ORDER BY ref_id',
          [[first.body.ref_id, second.body.ref_id]],
        );
        expect(rows).toEqual([
          { ref_id: first.body.ref_id, idempotency_key: null },
          { ref_id: second.body.ref_id, idempotency_key: idem },
        ]);
        expect((await send({ ...base(), subject: 'even a different body' }, { idem })).body.ref_id).toBe(
          second.body.ref_id,
        );
      });

      it('lets concurrent duplicates insert once', async () => {
        const idem = `race-${randomBytes(6).toString('hex')}`;
        const body = {
          ...base(),
          to: [{ email: 'r1@dest.test' }, { email: 'r2@dest.test' }],
          substitutions: { 'r1@dest.test': { x: '1' } },
        };
        const results = await Promise.all(Array.from({ length: 12 }, () => send(body, { idem })));
        expect(results.map((r) => r.status)).toEqual(Array(12).fill(200));
        const refIds = new Set(results.map((r) => r.body.ref_id));
        expect(refIds.size).toBe(1);
        const [refId] = [...refIds] as string[];
        expect(await counts(refId!)).toEqual({ sends: 1, logs: 2, outbox: 2 });
        expect(results.filter((r) => r.headers['idempotent-replayed'] === 'true')).toHaveLength(11);
      });

      it('gives different keys different sends', async () => {
        const a = await send(base(), { idem: `a-${randomBytes(6).toString('hex')}` });
        const b = await send(base(), { idem: `b-${randomBytes(6).toString('hex')}` });
        expect(a.body.ref_id).not.toBe(b.body.ref_id);
      });

      it.each([
        ['too long', 'k'.repeat(256)],
        ['empty', ''],
        ['non-ASCII', 'clé'],
      ])('rejects a key that is %s', async (_name, idem) => {
        const res = await gw.post('/v1/email/send').set('Idempotency-Key', idem).send(base());
        expect(res.status).toBe(400);
        expect(res.body).toEqual({
          success: false,
          error: 'Idempotency-Key must be 1 to 255 printable ASCII characters',
        });
      });

      it('accepts a 255-character key', async () => {
        expect(
          (await send(base(), { idem: `${randomBytes(4).toString('hex')}${'k'.repeat(247)}` })).status,
        ).toBe(200);
      });
    });
  });
}
