import { MODES } from '@mailyard/testkit/modes';
import { type Body, CONTROL_MESSAGE, b64, useSendSuite } from './support/send-suite';

/** POST /v1/email/send, header injection (400): line breaks and control characters in header-bound fields are refused. Run on embedded defaults and on the real servers. */
for (const mode of MODES) {
  describe(`send API (${mode})`, () => {
    const { base, send } = useSendSuite(mode);

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
  });
}
