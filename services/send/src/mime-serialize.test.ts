import { Readable } from 'node:stream';
import MailComposer from 'nodemailer/lib/mail-composer';
import { composerAttachments } from './attachment-parts';
import { SYNC_MAX_BYTES, serializeMimeTree } from './mime-serialize';

type Options = ConstructorParameters<typeof MailComposer>[0];

const date = new Date('2026-03-01T10:00:00Z');

/** Two trees of the same message (same boundaries and date): one written here, one by build(). */
async function both(options: Options): Promise<{ fast: Buffer | null; built: Buffer }> {
  const mail = { ...options, baseBoundary: 'fixedboundary01', date, messageId: '<m@x.test>' };
  const fast = serializeMimeTree(new MailComposer(mail).compile());
  const built = await new MailComposer(mail).compile().build();
  return { fast, built };
}

const long = `${'word '.repeat(40)}end`;
const cases: Record<string, Options> = {
  'plain ASCII text': { from: 'a@x.test', to: 'b@y.test', subject: 'Hi', text: 'Hello\nthere' },
  'text with a long line and trailing spaces': {
    from: 'a@x.test',
    to: 'b@y.test',
    subject: 'Hi',
    text: `${long}\nnext line   \n\ttab\r\nlast `,
  },
  'non-ASCII text, names and subject': {
    from: { name: 'Zoë, Ltd.', address: 'zoe@x.test' },
    to: [
      { name: 'Ünal', address: 'u@y.test' },
      { name: 'Smith, "J"', address: 's@y.test' },
    ],
    cc: ['c@y.test'],
    replyTo: 'r@x.test',
    subject: 'Grüße — 👋 from the team',
    text: 'Größe 😀\n'.repeat(30),
  },
  'html only with a long line': {
    from: 'a@x.test',
    to: 'b@y.test',
    subject: 'Hi',
    html: `<html><body><p style="a=b">${'x'.repeat(300)}</p></body></html>`,
  },
  'text and html': {
    from: { name: 'Bench News', address: 'news@x.test' },
    to: [{ name: 'User 1', address: 'u1@y.test' }],
    subject: 'Your weekly digest, User 1',
    text: `Hello\n\n${'Here is what happened this week. '.repeat(20)}`,
    html: `<h1>Hello</h1><p>${'Here is what happened this week. '.repeat(20)}</p>`,
    headers: { 'X-Campaign': 'spring', 'X-Note': 'naïve café', 'X-Is-Svc': 'true' },
    inReplyTo: '<a@b.test>',
    references: '<a@b.test> <c@d.test>',
  },
  'empty text': { from: 'a@x.test', to: 'b@y.test', subject: '', text: '' },
  'binary-looking text falls to base64': {
    from: 'a@x.test',
    to: 'b@y.test',
    subject: 's',
    text: '日本語のテキスト'.repeat(20),
  },
};

describe('serializeMimeTree', () => {
  for (const [name, options] of Object.entries(cases)) {
    it(`writes the bytes build() writes: ${name}`, async () => {
      const { fast, built } = await both(options);
      expect(fast).not.toBeNull();
      expect(fast!.toString('latin1')).toBe(built.toString('latin1'));
    });
  }

  it('writes pre-built attachment parts (related inline image, attached file, message/rfc822)', async () => {
    const attachments = await composerAttachments({
      attachments: [
        {
          filename: 'notes.txt',
          content: Buffer.from('attached text').toString('base64'),
          type: 'text/plain',
          disposition: 'attachment',
        },
        {
          filename: 'logo.png',
          content: Buffer.from('PNG').toString('base64'),
          type: 'image/png',
          disposition: 'inline',
          content_id: 'logo',
        },
        {
          filename: 'fwd.eml',
          content: Buffer.from('Subject: inner\r\n\r\nbody\r\n').toString('base64'),
          type: 'message/rfc822',
          disposition: 'attachment',
        },
      ],
    });
    const { fast, built } = await both({
      from: 'a@x.test',
      to: 'b@y.test',
      subject: 'Files',
      text: 'see attached',
      html: '<p>see <img src="cid:logo"></p>',
      attachments,
    });
    expect(fast!.toString('latin1')).toBe(built.toString('latin1'));
  });

  it('leaves large content and streams to build()', async () => {
    const big = new MailComposer({ from: 'a@x.test', text: 'x'.repeat(SYNC_MAX_BYTES + 1) }).compile();
    expect(serializeMimeTree(big)).toBeNull();
    const streamed = new MailComposer({
      from: 'a@x.test',
      attachments: [{ filename: 'a.bin', content: Readable.from([Buffer.from('abc')]) }],
    }).compile();
    expect(serializeMimeTree(streamed)).toBeNull();
  });
});
