import MailComposer from 'nodemailer/lib/mail-composer';
import { type MailOptions, directMime } from './direct-mime';
import { serializeMimeTree } from './mime-serialize';

/** What MailComposer writes for `mail` (its build(), the reference for mime-serialize.ts too). */
const composed = (mail: MailOptions) => new MailComposer(mail).compile().build();

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

function corpus(n: number): MailOptions[] {
  const out: MailOptions[] = [];
  for (let i = 0; i < n; i++) {
    const r = rng(i + 1);
    const shape = i % 3;
    const headers: Record<string, string> = {};
    if (r.chance(0.5))
      headers['X-Campaign'] = r.pick(['spring', 'naïve café', '', 'v '.repeat(60), 'a\r\nb']);
    if (r.chance(0.3)) headers['x-custom-id'] = r.pick(['123', '<id@x>', 'Привет']);
    if (r.chance(0.3))
      headers['List-Unsubscribe'] = '<https://t.example.com/u/abc>, <mailto:u+1@b.example.com>';
    if (r.chance(0.5)) headers['X-Is-Svc'] = 'true';
    const to = Array.from({ length: r.chance(0.7) ? 1 : 3 }, () => address(r));
    const mail: MailOptions = {
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
      disableFileAccess: true,
      disableUrlAccess: true,
      baseBoundary: r.pick(['0123456789abcdef', 'fedcba9876543210']),
    };
    if (r.chance(0.3)) mail.cc = [address(r)];
    if (r.chance(0.3))
      mail.replyTo = r.pick(['r@example.com', 'Support Team <s@example.com>', 'Zoë <z@x.test>']);
    if (r.chance(0.2)) mail.inReplyTo = '<a@b>';
    if (r.chance(0.2)) mail.references = '<a@b> <c@d>';
    if (shape !== 1) mail.text = body(r);
    if (shape !== 0) mail.html = `<html><body>${body(r)}</body></html>`;
    out.push(mail);
  }
  return out;
}

describe('directMime', () => {
  it('writes the bytes MailComposer writes, over a generated corpus of shapes and contents', async () => {
    const cases = corpus(600);
    let written = 0;
    for (const [i, mail] of cases.entries()) {
      const direct = directMime({ ...mail });
      if (!direct) continue;
      written++;
      const reference = await composed({ ...mail });
      // mime-serialize.ts (the tree written in one pass, the path of every other shape) too.
      const tree = serializeMimeTree(new MailComposer({ ...mail }).compile());
      if (!tree?.equals(reference))
        expect({ case: i, tree: tree?.toString() }).toEqual({ case: i, tree: reference.toString() });
      if (!direct.equals(reference)) {
        // The first difference, readable.
        expect({ case: i, direct: direct.toString() }).toEqual({ case: i, direct: reference.toString() });
      }
    }
    // Every case of the corpus is a shape it writes (none fell back).
    expect(written).toBe(cases.length);
  });

  it('writes what mime-serialize.ts writes for the benchmark copy (text + HTML)', () => {
    const paragraph = 'Here is what happened this week. '.repeat(20);
    const mail: MailOptions = {
      from: { name: 'Bench News', address: 'news@bench.test' },
      to: [{ name: 'Reader 1.2', address: 'b1.2@example.com' }],
      subject: 'Your weekly digest, Reader 1.2',
      messageId: '<svc_mailer_01J.1@mailyard.bench>',
      date: new Date('2026-03-01T10:00:00Z'),
      text: `Hello Reader 1.2\n\n${paragraph}\nhttps://bench.test/digest`,
      html: `<html><body><h1>Hello Reader 1.2</h1><p>${paragraph}</p></body></html>`,
      headers: { 'X-Is-Svc': 'true' },
      attachments: [],
      baseBoundary: 'abcdefabcdef0123',
    };
    expect(directMime({ ...mail })!.toString()).toBe(
      serializeMimeTree(new MailComposer({ ...mail }).compile())!.toString(),
    );
  });

  it('gives every message a boundary of its own', () => {
    const mail: MailOptions = {
      from: 'a@x.test',
      messageId: '<m@x.test>',
      date: new Date(),
      text: 'a',
      html: '<p>a</p>',
    };
    const boundary = (m: Buffer) => /boundary="([^"]+)"/.exec(m.toString())![1];
    // More messages than one fill of the pool of random bytes.
    const seen = new Set(Array.from({ length: 2000 }, () => boundary(directMime({ ...mail })!)));
    expect(seen.size).toBe(2000);
    for (const b of seen) expect(b).toMatch(/^--_NmP-[0-9a-f]{16}-Part_1$/);
  });

  it('leaves every other shape to MailComposer', () => {
    const base: MailOptions = {
      from: 'a@x.test',
      to: 'b@y.test',
      subject: 'Hi',
      messageId: '<m@x.test>',
      date: new Date(),
      text: 'hello',
    };
    expect(directMime(base)).not.toBeNull();
    for (const change of [
      { attachments: [{ filename: 'a.txt', content: 'x' }] },
      { headers: { 'Content-Type': 'text/plain' } },
      { headers: { from: 'x@y.test' } },
      { headers: { 'mime-version': '2.0' } },
      { headers: { key: 'a', value: 'b' } },
      { headers: { 'X-Multi': ['a', 'b'] as unknown as string } },
      { text: '', html: '' },
      { text: Buffer.from('hello') },
      { text: 'x'.repeat(300 * 1024) },
      { icalEvent: 'BEGIN:VCALENDAR' },
      { amp: '<p>amp</p>' },
      { bcc: 'c@y.test' },
      { encoding: 'base64' },
      { messageId: undefined },
    ] as MailOptions[]) {
      expect(directMime({ ...base, ...change })).toBeNull();
    }
  });
});
