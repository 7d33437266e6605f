import { MODES } from '@mailyard/testkit/modes';
import request from 'supertest';
import { type Body, b64, useSendSuite } from './support/send-suite';

/** POST /v1/email/send, validation (400): the payload is validated before anything is stored; each rule answers 400 with its message. Run on embedded defaults and on the real servers. */
for (const mode of MODES) {
  describe(`send API (${mode})`, () => {
    const { gw, base, send } = useSendSuite(mode);

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
  });
}
