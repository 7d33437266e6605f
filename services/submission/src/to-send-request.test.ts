import { hasBareLineEnd, toSendRequest } from './to-send-request';

const raw = (s: string) => Buffer.from(s.replace(/\n/g, '\r\n'));

describe('hasBareLineEnd', () => {
  test.each([
    ['a\r\nb\r\n', false],
    ['a\nb', true],
    ['a\r.\rb', true],
    ['a\r\n.\nb', true],
    ['\n', true],
    ['end\r', true],
  ])('%j -> %s', (s, bare) => expect(hasBareLineEnd(Buffer.from(s))).toBe(bare));
});

describe('toSendRequest', () => {
  const envelope = { mailFrom: 'me@example.com', rcptTo: ['ann@x.example', 'cc@x.example', 'hid@x.example'] };

  test('To/Cc by header, others Bcc; X-Mailyard-* read and removed; custom headers kept, protected dropped', async () => {
    const out = await toSendRequest(
      raw(
        'From: Me <me@example.com>\nTo: Ann <ann@x.example>\nCc: cc@x.example\nBcc: hid@x.example\nSubject: Hi\nX-Mailyard-Mailer: m_1\nX-Mailyard-Track-Opens: true\nX-Custom: v\nReceived: from x\nContent-Type: text/plain\n\nbody\n',
      ),
      envelope,
    );
    expect(out).toMatchObject({
      ok: true,
      mailerHeader: 'm_1',
      sender: 'me@example.com',
      request: {
        from: { email: 'me@example.com', name: 'Me' },
        to: [{ email: 'ann@x.example', name: 'Ann' }],
        cc: [{ email: 'cc@x.example' }],
        bcc: [{ email: 'hid@x.example' }],
        subject: 'Hi',
        headers: { 'X-Custom': 'v' },
        settings: { open_tracking: { enable: true }, click_tracking: { enable: false } },
      },
    });
  });

  test('no envelope recipient named in To or Cc: all are `to`, each in a copy of its own', async () => {
    const out = await toSendRequest(raw('From: me@example.com\nTo: list@example.com\nSubject: s\n\nb\n'), {
      mailFrom: 'me@example.com',
      rcptTo: ['a@x.example', 'b@x.example'],
    });
    expect(out.ok && (out.request.to as Array<{ email: string }>).map((r) => r.email)).toEqual([
      'a@x.example',
      'b@x.example',
    ]);
    expect(out.ok && out.request.substitutions).toEqual({ 'a@x.example': {}, 'b@x.example': {} });
  });

  test('refusals are answers: bare LF, no subject, no body', async () => {
    expect(await toSendRequest(Buffer.from('Subject: s\n\nb\n'), envelope)).toMatchObject({
      ok: false,
      code: 550,
    });
    expect(await toSendRequest(raw('From: me@example.com\n\nb\n'), envelope)).toMatchObject({
      ok: false,
      message: expect.stringContaining('Subject'),
    });
    expect(await toSendRequest(raw('From: me@example.com\nSubject: s\n\n'), envelope)).toMatchObject({
      ok: false,
      message: expect.stringContaining('no text or HTML body'),
    });
  });
});
