import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  type IncomingEmailDetails,
  type IncomingEmailPayload,
  incomingEmailErrorEventSchema,
  incomingEmailEventSchema,
} from '@mailyard/contracts';
import { buildIncomingEmail } from './incoming-email';

/** The MIME corpus in ./fixtures (written for this project), checked field by field. */
const context = {
  recipient: 'support@inbound.example.com',
  webhookId: 'wh_1',
  mailerId: 'mailer_1',
  mailerService: 'smtp',
  labelIds: ['INBOX'],
};

async function build(name: string): Promise<IncomingEmailDetails> {
  const payload: IncomingEmailPayload = await buildIncomingEmail(
    readFileSync(join(__dirname, 'fixtures', name)),
    context,
  );
  expect(payload.success).toBe(true);
  return incomingEmailEventSchema.parse(payload).details;
}

const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64');
const text = (b64content: string) => Buffer.from(b64content, 'base64').toString('utf8');

describe('buildIncomingEmail', () => {
  test('multipart/alternative: every details field', async () => {
    const d = await build('alternative.eml');
    expect(d).toEqual({
      subject: 'Quarterly report',
      from: '"Alice Example" <alice@example.org>',
      'reply-to': '',
      to: 'support@inbound.example.com, "Bob" <bob@inbound.example.com>',
      cc: 'carol@example.net',
      bcc: '',
      date: '2026-11-26T08:30:15Z',
      recipient: 'support@inbound.example.com',
      'body-plain': 'Hello team,\nnumbers attached.',
      'body-html': '<p>Hello team,<br>numbers attached.</p>',
      'message-id': '<alt-1@example.org>',
      'in-reply-to': '<svc_mailer_01JABCDEF@mailyard.test>',
      references: '<root-0@example.org> <svc_mailer_01JABCDEF@mailyard.test>',
      'thread-id': '',
      'content-type': 'multipart/alternative',
      'user-agent': 'Thunderbird/128.0',
      headers: expect.any(Object),
      files: [],
      'webhook-id': 'wh_1',
      'mailer-id': 'mailer_1',
      'mailer-service': 'smtp',
      'label-ids': ['INBOX'],
    });
    expect(d.headers.Received).toEqual([
      'from mx.example.org (mx.example.org [192.0.2.10])\tby mx.mailyard.test; Thu, 26 Nov 2026 08:00:00 +0000',
    ]);
    expect(d.headers.References).toEqual(['<root-0@example.org> <svc_mailer_01JABCDEF@mailyard.test>']);
    expect(d.headers['Content-Type']).toEqual(['multipart/alternative; boundary="b1"']);
    expect(Object.keys(d.headers)).toHaveLength(14);
  });

  test('inline image: contentId without brackets, inline disposition, location, html body', async () => {
    const d = await build('inline-image.eml');
    expect(d['body-plain']).toBe('');
    expect(d['body-html']).toBe('<p>Logo: <img src="cid:logo@example.org"></p>');
    expect(d.date).toBe('2026-11-26T07:59:59Z');
    expect(d['content-type']).toBe('multipart/related');
    expect(d.files).toHaveLength(1);
    const [img] = d.files;
    expect(img).toMatchObject({
      filename: 'logo.png',
      contentType: 'image/png',
      disposition: 'inline',
      contentId: 'logo@example.org',
      contentLocation: 'https://example.org/logo.png',
      size: 70,
    });
    expect(
      Buffer.from(img?.content ?? '', 'base64')
        .subarray(1, 4)
        .toString(),
    ).toBe('PNG');
  });

  test('base64 and quoted-printable attachments are decoded, X-Mailer as user-agent', async () => {
    const d = await build('attachments.eml');
    expect(d['body-plain']).toBe('See attachments.');
    expect(d['user-agent']).toBe('BillingBot 2.1');
    expect(d.files.map((f) => [f.filename, f.contentType, f.disposition])).toEqual([
      ['invoice.pdf', 'application/pdf', 'attachment'],
      ['notes.txt', 'text/plain', 'attachment'],
    ]);
    const pdf = Buffer.from('%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n', 'latin1');
    expect(d.files[0]?.content).toBe(b64(pdf));
    expect(d.files[0]?.size).toBe(pdf.length);
    expect(text(d.files[1]?.content ?? '')).toBe(`Prix: 100 € =\r\nligne longue ${'x'.repeat(90)}`);
  });

  test.each([
    ['iso-8859-1.eml', 'Café menu', 'Crème brûlée à volonté.\n'],
    ['shift_jis.eml', '日本語', '日本語のテキストです。\n'],
    ['koi8-r.eml', 'Привет', 'Привет, мир!\n'],
  ])('%s: subject and body converted to UTF-8', async (file, subject, body) => {
    const d = await build(file);
    expect(d.subject).toBe(subject);
    expect(d['body-plain']).toBe(body);
    expect(d['content-type']).toBe('text/plain');
    expect(d.date).toBe('2026-11-23T03:00:00Z');
    expect(d.headers.Subject).toEqual([subject]);
  });

  test('RFC 2047 encoded headers are decoded in fields and in headers', async () => {
    const d = await build('rfc2047.eml');
    expect(d.subject).toBe('Grüße aus München');
    expect(d.from).toBe('"Jörg Müller" <joerg@example.de>');
    expect(d.to).toBe('"Zürich Office" <zurich@inbound.example.com>');
    expect(d['body-plain']).toBe('Schöne Grüße');
    expect(d.headers.From).toEqual(['Jörg Müller <joerg@example.de>']);
  });

  test('forwarded message/rfc822 is one file, not merged into the body', async () => {
    const d = await build('forwarded.eml');
    expect(d['body-plain']).toBe('See below.');
    expect(d.files).toHaveLength(1);
    expect(d.files[0]).toMatchObject({ contentType: 'message/rfc822', filename: '', disposition: '' });
    const inner = text(d.files[0]?.content ?? '');
    expect(inner).toContain('Subject: Original');
    expect(inner).toContain('The original text.');
  });

  test('calendar invite is an other part in files', async () => {
    const d = await build('calendar.eml');
    expect(d['body-plain']).toBe('You are invited.');
    expect(d.files).toHaveLength(1);
    expect(d.files[0]).toMatchObject({ contentType: 'text/calendar', disposition: '', contentId: '' });
    expect(text(d.files[0]?.content ?? '')).toContain('SUMMARY:Sync');
  });

  test('S/MIME signature part is a file', async () => {
    const d = await build('smime-signed.eml');
    expect(d['content-type']).toBe('multipart/signed');
    expect(d['body-plain']).toBe('Signed body.');
    expect(d.files).toEqual([
      {
        filename: 'smime.p7s',
        contentType: 'application/pkcs7-signature',
        content: b64(Buffer.from('0\x82\x01\x00fake-pkcs7-signature-bytes', 'latin1')),
        disposition: 'attachment',
        contentId: '',
        contentLocation: '',
        size: 30,
      },
    ]);
  });

  test('broken MIME (unknown charset, bad base64, unclosed boundary) still yields what is readable', async () => {
    const d = await build('broken.eml');
    expect(d.subject).toBe('Broken MIME');
    expect(d.date).toBe('');
    expect(d['body-plain']).toBe('Hello broken world');
    expect(d.files).toHaveLength(1);
    expect(d.files[0]).toMatchObject({ filename: 'trunc.bin', content: 'AAEC', size: 3 });
  });

  test('input that is not a message becomes the spec error form', async () => {
    for (const raw of [readFileSync(join(__dirname, 'fixtures', 'not-a-message.eml')), Buffer.alloc(0)]) {
      const payload = await buildIncomingEmail(raw, context);
      expect(incomingEmailErrorEventSchema.parse(payload)).toEqual({
        event: 'INCOMING_EMAIL',
        details: { error: expect.any(String), 'mailer-id': 'mailer_1', 'webhook-id': 'wh_1' },
        success: false,
      });
    }
  });

  test('reply-to is kept when it differs from from; thread id passes through', async () => {
    const raw = Buffer.from('From: a@example.org\r\nReply-To: b@example.org\r\nSubject: x\r\n\r\nbody\r\n');
    const payload = await buildIncomingEmail(raw, { ...context, threadId: 't1' });
    const d = incomingEmailEventSchema.parse(payload).details;
    expect(d['reply-to']).toBe('b@example.org');
    expect(d['thread-id']).toBe('t1');
    expect(d['content-type']).toBe('text/plain');
    expect(d['body-plain']).toBe('body\n');
  });
});
