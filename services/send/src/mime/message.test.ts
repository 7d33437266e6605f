import MailComposer from 'nodemailer/lib/mail-composer';
import { attachmentParts } from './attachments';
import { SYNC_MAX_BYTES } from './encoding';
import { type MessageFields, writeMessage } from './message';

/** What nodemailer's MailComposer writes for the same fields: the reference of these tests. */
const composed = (mail: MessageFields) =>
  new MailComposer({ ...mail, attachments: [...mail.attachments] } as never).compile().build();

/** Both writers' bytes, compared as text so that a difference reads well. */
async function expectSameAsComposer(mail: MessageFields, label: unknown = ''): Promise<void> {
  const [ours, reference] = await Promise.all([writeMessage({ ...mail }), composed({ ...mail })]);
  if (!ours.equals(reference))
    expect({ label, ours: ours.toString('latin1') }).toEqual({ label, ours: reference.toString('latin1') });
}

/** A small deterministic generator, so a failing case can be rebuilt from its index. */
function rng(seed: number) {
  let s = seed >>> 0;
  const next = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;
  return { next, pick, chance: (p: number) => next() < p };
}

const WORDS = [
  'hello',
  'Here is what happened this week.',
  'naïve café',
  'Größe',
  'Привет мир',
  '日本語のテキスト',
  '😀👋',
  'a=b',
  '=?utf-8?Q?x?=',
  '.',
  '..leading dot',
  'tab\there',
  'trailing   ',
  '<a href="https://example.com/x?a=1&b=2">link</a>',
  'x'.repeat(90),
  'word '.repeat(30),
  '\u0001ctl',
  '"quoted"',
];
const BREAKS = ['\n', '\r\n', '\r', '\n\n', ' ', ''];
const NAMES = ['', 'User 1', 'Zoë, Ltd.', 'Smith, "J"', 'Ünal Öz', '山田', 'a'.repeat(80), "O'Brien (team)"];
const ADDRESSES = [
  'u@example.com',
  'first.last@sub.example.org',
  'user@bücher.de',
  'üser@bücher.de',
  'x+tag@y.test',
];

function body(r: ReturnType<typeof rng>): string {
  let s = '';
  const n = 1 + Math.floor(r.next() * 40);
  for (let i = 0; i < n; i++) s += r.pick(WORDS) + r.pick(BREAKS);
  return s;
}

function address(r: ReturnType<typeof rng>) {
  const name = r.pick(NAMES);
  const email = r.pick(ADDRESSES);
  return name ? { name, address: email } : email;
}

function corpus(n: number): MessageFields[] {
  const out: MessageFields[] = [];
  for (let i = 0; i < n; i++) {
    const r = rng(i + 1);
    const shape = i % 3;
    const headers: Record<string, string> = {};
    if (r.chance(0.5))
      headers['X-Campaign'] = r.pick([
        'spring',
        'naïve café',
        '',
        'v '.repeat(60),
        'a\r\nb',
        'ctl\u0001 here',
        'Привет мир',
      ]);
    if (r.chance(0.3)) headers['x-custom-id'] = r.pick(['123', '<id@x>', 'Привет']);
    if (r.chance(0.3))
      headers['List-Unsubscribe'] = '<https://t.example.com/u/abc>, <mailto:u+1@b.example.com>';
    if (r.chance(0.5)) headers['X-Is-Svc'] = 'true';
    const to = Array.from({ length: r.chance(0.7) ? 1 : 3 }, () => address(r));
    const mail: MessageFields = {
      from: address(r),
      to,
      subject: r.pick([
        'Your weekly digest, User 1',
        'Grüße — 👋 from the team',
        '',
        'S '.repeat(50),
        'x\ny',
      ]),
      messageId: `<svc_mailer_01JABCDEFGHJKMNPQRSTVWXYZ${i}.1@mailyard.test>`,
      date: new Date(Date.UTC(2026, 0, 1 + (i % 28), i % 24, i % 60, i % 60)),
      headers,
      attachments: [],
      baseBoundary: r.pick(['0123456789abcdef', 'fedcba9876543210']),
    };
    if (r.chance(0.3)) mail.cc = [address(r)];
    if (r.chance(0.3))
      mail.replyTo = r.pick(['r@example.com', 'Support Team <s@example.com>', 'Zoë <z@x.test>']);
    if (r.chance(0.2)) mail.inReplyTo = r.pick(['<a@b>', 'a@b', '<a@b>\r\n']);
    if (r.chance(0.2)) mail.references = '<a@b> <c@d>';
    if (shape !== 1) mail.text = body(r);
    if (shape !== 0) mail.html = `<html><body>${body(r)}</body></html>`;
    out.push(mail);
  }
  return out;
}

const base = (fields: Partial<MessageFields>): MessageFields => ({
  headers: {},
  from: 'a@x.test',
  to: ['b@y.test'],
  subject: 'Hi',
  messageId: '<m@x.test>',
  date: new Date('2026-03-01T10:00:00Z'),
  attachments: [],
  baseBoundary: 'fixedboundary01',
  ...fields,
});

const long = `${'word '.repeat(40)}end`;

describe('writeMessage', () => {
  it('writes the bytes MailComposer writes, over a generated corpus of shapes and contents', async () => {
    for (const [i, mail] of corpus(600).entries()) await expectSameAsComposer(mail, i);
  });

  const bodies: Record<string, Partial<MessageFields>> = {
    'plain ASCII text': { text: 'Hello\nthere' },
    'text with a long line and trailing spaces': { text: `${long}\nnext line   \n\ttab\r\nlast ` },
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
    'html only with a long line': { html: `<html><body><p style="a=b">${'x'.repeat(300)}</p></body></html>` },
    'no body at all': {},
    'empty text and html': { text: '', html: '' },
    'binary-looking text falls to base64': { text: '日本語のテキスト'.repeat(20) },
    'large base64 text (encoder stream)': { text: '日本語'.repeat(SYNC_MAX_BYTES / 4) },
    'quoted-printable over one encoder slice': { html: `<p>${'Grüße, trailing '.repeat(6000)}</p>   ` },
    'large 7bit text': { text: 'short line\r\n'.repeat(SYNC_MAX_BYTES / 8) },
  };
  for (const [name, fields] of Object.entries(bodies)) {
    it(`writes the bytes MailComposer writes: ${name}`, async () => {
      await expectSameAsComposer(base(fields));
    });
  }

  it('lays out attachments as MailComposer does (mixed, related, message/rfc822)', async () => {
    const stored = (filename: string, content: string, type: string, content_id?: string) => ({
      filename,
      content: Buffer.from(content).toString('base64'),
      type,
      disposition: content_id ? ('inline' as const) : ('attachment' as const),
      ...(content_id ? { content_id } : {}),
    });
    const file = stored('notes.txt', 'attached text', 'text/plain');
    const image = stored('logo.png', 'PNG', 'image/png', 'logo');
    const eml = stored('fwd.eml', 'Subject: inner\r\n\r\nbody\r\n', 'message/rfc822');
    const eml8 = stored('ü.eml', 'Subject: ü\r\n\r\nü', 'message/rfc822');
    const sets = [[file], [image], [file, image], [file, image, eml], [eml8], [image, image], [file, file]];
    const contents: Array<Partial<MessageFields>> = [
      { text: 'see attached', html: '<p>see <img src="cid:logo"></p>' },
      { html: '<p><img src="cid:logo"></p>' },
      { text: 'text only' },
      {},
    ];
    for (const [s, set] of sets.entries()) {
      const attachments = await attachmentParts({ attachments: set });
      for (const [c, content] of contents.entries())
        await expectSameAsComposer(base({ ...content, attachments }), { set: s, content: c });
    }
  });

  it('gives every multipart message a boundary of its own', async () => {
    const mail = base({ text: 'a', html: '<p>a</p>', baseBoundary: undefined });
    const boundary = (m: Buffer) => /boundary="([^"]+)"/.exec(m.toString())![1];
    // More messages than one fill of the pool of random bytes.
    const seen = new Set(
      await Promise.all(Array.from({ length: 2000 }, async () => boundary(await writeMessage(mail)))),
    );
    expect(seen.size).toBe(2000);
    for (const b of seen) expect(b).toMatch(/^--_NmP-[0-9a-f]{16}-Part_1$/);
  });
});
