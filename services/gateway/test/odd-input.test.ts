import { gzipSync } from 'node:zlib';
import { MODES } from '@mailyard/testkit/modes';
import request from 'supertest';
import { bearer, useGateway } from './support/harness';

const ADMIN = 'admin-key-for-odd-input-tests-01';
const NUL = '\u0000';
const LONE = '\ud800';

/** A forged page token: our format, with an id that is not an id. */
const forgedToken = (after: string) => Buffer.from(JSON.stringify({ v: 1, after })).toString('base64url');

const sendBody = (extra: Record<string, unknown> = {}) => ({
  from: { email: 'sender@example.com' },
  to: [{ email: 'rcpt@example.org' }],
  mailer_id: 'smtp_nope',
  subject: 'Hello',
  content: [{ type: 'text/plain', value: 'Hi' }],
  ...extra,
});

const smtpBody = (config: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => ({
  name: 'Relay',
  email: 'relay@example.com',
  config: { host: '192.0.2.1', port: 2525, username: 'u', password: 'p', ...config },
  ...extra,
});

/** A JSON text nested `depth` objects deep under custom_args. */
function deepSendJson(depth: number): string {
  let inner = '"x"';
  for (let i = 0; i < depth; i++) inner = `{"a":${inner}}`;
  const body = JSON.stringify(sendBody({ custom_args: { k: 'PLACEHOLDER' } }));
  return body.replace('"PLACEHOLDER"', inner);
}

/**
 * Issue 7 item 6: odd input that answered 500 (PostgreSQL refusing NUL or a lone surrogate,
 * express failing to decode a path, zlib failing on a body, JSON.stringify overflowing its
 * stack) answers 400 with the spec envelope, checked once at the edge for every route.
 */
for (const mode of MODES) {
  describe(`odd input answers 400, never 500 (${mode})`, () => {
    const gw = useGateway(mode, { ADMIN_API_KEY: ADMIN });
    // Buffers go out as their bytes (superagent would serialise a Buffer with a JSON type as JSON).
    const json = (method: 'post' | 'put', path: string, raw: string | Buffer, key = gw.key) =>
      request(gw.app)
        [method](path)
        .set(bearer(key))
        .set('Content-Type', 'application/json')
        .serialize((b: unknown) => b as string)
        .send(raw as string);
    const expect400 = (res: { status: number; body: unknown }, error: string) => {
      expect({ status: res.status, body: res.body }).toEqual({
        status: 400,
        body: { success: false, error },
      });
    };

    describe('NUL and lone surrogates in JSON bodies', () => {
      it.each([
        [
          'template name',
          'post',
          '/v1/email/template',
          { name: `a${NUL}b`, subject: 's', content: [{ type: 'text/plain', value: 'x' }] },
          'name must not contain NUL characters',
        ],
        [
          'template content',
          'post',
          '/v1/email/template',
          { name: 'n', subject: 's', content: [{ type: 'text/html', value: `<p>${NUL}</p>` }] },
          'content[0].value must not contain NUL characters',
        ],
        [
          'template content (lone surrogate)',
          'post',
          '/v1/email/template',
          { name: 'n', subject: 's', content: [{ type: 'text/plain', value: `x${LONE}y` }] },
          'content[0].value must be valid Unicode text (it contains a lone surrogate)',
        ],
        [
          'template update id',
          'put',
          '/v1/email/template',
          { template_id: `template_${NUL}`, name: 'n' },
          'template_id must not contain NUL characters',
        ],
        [
          'send template_id',
          'post',
          '/v1/email/send',
          sendBody({ template_id: `t${NUL}` }),
          'template_id must not contain NUL characters',
        ],
        [
          'send content',
          'post',
          '/v1/email/send',
          sendBody({ content: [{ type: 'text/plain', value: `a${NUL}` }] }),
          'content[0].value must not contain NUL characters',
        ],
        [
          'send content (lone surrogate)',
          'post',
          '/v1/email/send',
          sendBody({ content: [{ type: 'text/plain', value: `a${LONE}` }] }),
          'content[0].value must be valid Unicode text (it contains a lone surrogate)',
        ],
        [
          'send display name (lone surrogate)',
          'post',
          '/v1/email/send',
          sendBody({ to: [{ email: 'rcpt@example.org', name: `N${LONE}` }] }),
          'to[0].name must be valid Unicode text (it contains a lone surrogate)',
        ],
        [
          'send custom_args value',
          'post',
          '/v1/email/send',
          sendBody({ custom_args: { order: `1${NUL}` } }),
          'custom_args.order must not contain NUL characters',
        ],
        [
          'send custom_args key',
          'post',
          '/v1/email/send',
          sendBody({ custom_args: { [`k${NUL}`]: 1 } }),
          'custom_args must not have keys containing NUL characters',
        ],
        [
          'send substitutions',
          'post',
          '/v1/email/send',
          sendBody({ substitutions: { 'rcpt@example.org': { name: `x${NUL}` } } }),
          'substitutions.rcpt@example.org.name must not contain NUL characters',
        ],
        [
          'mailer name',
          'post',
          '/v1/mailer/smtp',
          smtpBody({}, { name: `R${NUL}` }),
          'name must not contain NUL characters',
        ],
        [
          'mailer host',
          'post',
          '/v1/smtpbasic/verify',
          smtpBody({ host: `h${NUL}.example` }),
          'config.host must not contain NUL characters',
        ],
        [
          'mailer password',
          'post',
          '/v1/mailer/smtp',
          smtpBody({ password: `p${NUL}` }),
          'config.password must not contain NUL characters',
        ],
        [
          'mailer update',
          'put',
          '/v1/mailer/smtp',
          { mailer_id: `smtp_${NUL}`, name: 'x' },
          'mailer_id must not contain NUL characters',
        ],
        [
          'imap mailer username',
          'post',
          '/v1/mailer/imap',
          {
            name: 'I',
            email: 'i@example.com',
            config: { host: '192.0.2.1', username: `u${LONE}`, password: 'p' },
          },
          'config.username must be valid Unicode text (it contains a lone surrogate)',
        ],
        [
          'domain custom_args',
          'post',
          '/v1/domain/add',
          { domain: 'odd.example', custom_args: { a: [`${NUL}`] } },
          'custom_args.a[0] must not contain NUL characters',
        ],
        [
          'suppression email',
          'post',
          '/v1/email/unsubscribe',
          { email: `a${NUL}@example.com` },
          'email must not contain NUL characters',
        ],
      ] as const)('%s', async (_name, method, path, body, error) => {
        expect400(await json(method, path, JSON.stringify(body)), error);
      });

      it('admin fields', async () => {
        expect400(
          await json('post', '/admin/v1/tenants', JSON.stringify({ name: `T${NUL}` }), ADMIN),
          'name must not contain NUL characters',
        );
        expect400(
          await json('post', '/admin/v1/tenants', JSON.stringify({ name: `T${LONE}` }), ADMIN),
          'name must be valid Unicode text (it contains a lone surrogate)',
        );
      });
    });

    describe('NUL in paths, query filters and page tokens', () => {
      it.each([
        ['get', '/v1/email/template/a%00b'],
        ['delete', '/v1/email/template/a%00b'],
        ['get', '/v1/mailer/smtp_%00'],
        ['delete', '/v1/mailer/smtp_%00'],
        ['post', '/v1/mailer/smtp_%00/enable'],
        ['get', '/v1/domain/a%00.example'],
        ['put', '/v1/domain/verify/a%00.example'],
      ] as const)('%s %s', async (method, path) => {
        expect400(
          await request(gw.app)[method](path).set(bearer(gw.key)),
          'URL path must not contain NUL characters',
        );
      });

      it('admin paths', async () => {
        expect400(
          await request(gw.app).post('/admin/v1/tenants/t%00/keys').set(bearer(ADMIN)),
          'URL path must not contain NUL characters',
        );
        expect400(
          await request(gw.app).delete('/admin/v1/keys/k%00').set(bearer(ADMIN)),
          'URL path must not contain NUL characters',
        );
      });

      it('a path that does not percent-decode', async () => {
        for (const path of ['/v1/email/template/a%ZZb', '/v1/mailer/%E0%A4%A', '/v1/domain/%'])
          expect400(await gw.get(path), 'Malformed URL: invalid percent-encoding');
      });

      it.each(['refId', 'subject', 'campaignId', 'email', 'domain', 'status', 'pageToken'])(
        'log filter %s',
        async (name) => {
          expect400(await gw.get(`/v1/email/logs?${name}=a%00b`), `${name} must not contain NUL characters`);
        },
      );

      it.each(['/v1/email/templates', '/v1/email/logs', '/v1/mailers', '/v1/domains'])(
        'a forged pageToken on %s',
        async (path) => {
          for (const after of [`tpl${NUL}`, `x${LONE}`, "x' OR 1=1 --"]) {
            expect400(
              await gw.get(`${path}?pageToken=${encodeURIComponent(forgedToken(after))}`),
              'Invalid pageToken',
            );
          }
          expect400(await gw.get(`${path}?pageToken=%00`), 'pageToken must not contain NUL characters');
        },
      );
    });

    describe('shape and encoding of the body', () => {
      it('custom_args nested 5,000 deep is refused while reading, as any body past 32 levels', async () => {
        expect400(
          await json('post', '/v1/email/send', deepSendJson(5000)),
          'JSON body is nested too deeply (at most 32 levels)',
        );
        expect400(
          await json(
            'post',
            '/v1/domain/add',
            `{"domain":"d.example","custom_args":${'['.repeat(40)}${']'.repeat(40)}}`,
          ),
          'JSON body is nested too deeply (at most 32 levels)',
        );
        // 30 levels is fine for the edge; the route then judges the content.
        const ok = await json('post', '/v1/email/send', deepSendJson(25));
        expect(ok.status).toBe(404);
        expect(ok.body).toEqual({ success: false, error: 'Mailer not found' });
      });

      it('too many values: 10,000 on ordinary routes, 100,000 on the send route', async () => {
        const many = (n: number) => `[${'{},'.repeat(n)}{}]`;
        expect400(
          await json('post', '/v1/email/template', many(20_000)),
          'JSON body has too many values (at most 10000)',
        );
        expect400(
          await json('post', '/v1/email/send', many(200_000)),
          'JSON body has too many values (at most 100000)',
        );
        const sendSized = await json('post', '/v1/email/send', many(20_000));
        expect(sendSized.status).toBe(400);
        expect(sendSized.body.error).toBe('body must be an object');
      });

      it.each(['gzip', 'br', 'deflate'])('a body that is not valid %s data', async (encoding) => {
        const res = await json('post', '/v1/email/template', Buffer.from('definitely not compressed')).set(
          'Content-Encoding',
          encoding,
        );
        expect400(res, `Request body is not valid ${encoding} data (Content-Encoding)`);
      });

      it('a valid gzip body is read; NUL inside it is found after decompression', async () => {
        const good = gzipSync(
          JSON.stringify({ name: 'Zipped', subject: 's', content: [{ type: 'text/plain', value: 'x' }] }),
        );
        const res = await json('post', '/v1/email/template', good).set('Content-Encoding', 'gzip');
        expect(res.status).toBe(201);
        const bad = gzipSync(
          JSON.stringify({ name: `Z${NUL}`, subject: 's', content: [{ type: 'text/plain', value: 'x' }] }),
        );
        expect400(
          await json('post', '/v1/email/template', bad).set('Content-Encoding', 'gzip'),
          'name must not contain NUL characters',
        );
      });

      it('a gzip bomb stops at the limit after decompression (413)', async () => {
        const bomb = gzipSync(Buffer.from(`{"name":"${'a'.repeat(5 * 1024 * 1024)}"}`));
        expect(bomb.length).toBeLessThan(64 * 1024);
        const res = await json('post', '/v1/email/template', bomb).set('Content-Encoding', 'gzip');
        expect(res.status).toBe(413);
        expect(res.body).toEqual({ success: false, error: 'Request body too large' });
      });

      it('unsupported encodings, content types and charsets answer 415; bytes that are not UTF-8 400', async () => {
        const body = JSON.stringify({ email: 'a@example.com' });
        const compress = await json('post', '/v1/email/unsubscribe', body).set(
          'Content-Encoding',
          'compress',
        );
        expect(compress.status).toBe(415);
        expect(compress.body).toEqual({
          success: false,
          error: 'Content-Encoding must be gzip, deflate, br or identity',
        });
        const text = await request(gw.app)
          .post('/v1/email/unsubscribe')
          .set(bearer(gw.key))
          .set('Content-Type', 'text/plain')
          .send(body);
        expect(text.status).toBe(415);
        expect(text.body).toEqual({ success: false, error: 'Content-Type must be application/json' });
        const latin1 = await json('post', '/v1/email/unsubscribe', body).set(
          'Content-Type',
          'application/json; charset=latin1',
        );
        expect(latin1.status).toBe(415);
        expect400(
          await json(
            'post',
            '/v1/email/unsubscribe',
            Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]),
          ),
          'Request body must be UTF-8 encoded JSON',
        );
        const ok = await json('post', '/v1/email/unsubscribe', body).set(
          'Content-Type',
          'application/json; charset=UTF-8',
        );
        expect(ok.status).toBe(200);
      });

      it('1 MB for every route, the send limit only on the send route, and only once authenticated', async () => {
        const big = (n: number) =>
          JSON.stringify({
            name: 'big',
            subject: 's',
            content: [{ type: 'text/plain', value: 'x'.repeat(n) }],
          });
        expect((await json('post', '/v1/email/template', big(900 * 1024))).status).toBe(201);
        const over = await json('post', '/v1/email/template', big(1100 * 1024));
        expect(over.status).toBe(413);
        const sendBig = JSON.stringify(
          sendBody({ content: [{ type: 'text/plain', value: 'x'.repeat(3 * 1024 * 1024) }] }),
        );
        const send = await json('post', '/v1/email/send', sendBig);
        expect(send.body).toEqual({ success: false, error: 'Mailer not found' });
        const anonymous = await request(gw.app)
          .post('/v1/email/send')
          .set('Content-Type', 'application/json')
          .send(sendBig);
        expect(anonymous.status).toBe(401);
        const anonymousAdmin = await request(gw.app)
          .post('/admin/v1/tenants')
          .set('Content-Type', 'application/json')
          .send(big(2 * 1024 * 1024));
        expect(anonymousAdmin.status).toBe(401);
      });
    });
  });
}
