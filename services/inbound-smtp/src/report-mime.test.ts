import { MAX_PARTS, parseFields, readMime } from './report-mime';

describe('readMime', () => {
  test('a single-part message is its own leaf; LF or CRLF line ends', () => {
    for (const eol of ['\n', '\r\n']) {
      const m = readMime(
        Buffer.from(['Subject: =?UTF-8?B?w7xiZXI=?=', 'X-A: 1', '  2', '', 'body'].join(eol)),
      );
      expect(m.headers.get('subject')).toEqual(['über']);
      expect(m.headers.get('x-a')).toEqual(['1 2']);
      expect(m.parts).toHaveLength(1);
      expect(m.parts[0]!.type).toBe('text/plain');
      expect(m.parts[0]!.body.toString()).toBe('body');
    }
  });

  test('decodes base64 and quoted-printable and converts charsets to UTF-8', () => {
    const raw = [
      'Content-Type: multipart/mixed; boundary=b',
      '',
      '--b',
      'Content-Type: text/plain; charset=iso-8859-1',
      'Content-Transfer-Encoding: quoted-printable',
      '',
      'Gr=FC=DFe, long li=',
      'ne',
      '--b',
      'Content-Type: message/delivery-status',
      'Content-Transfer-Encoding: base64',
      '',
      Buffer.from('Action: failed\n').toString('base64'),
      '--b--',
    ].join('\r\n');
    const m = readMime(Buffer.from(raw));
    expect(m.parts.map((p) => [p.type, p.body.toString('utf8')])).toEqual([
      ['text/plain', 'Grüße, long line'],
      ['message/delivery-status', 'Action: failed\n'],
    ]);
  });

  test('hostile input is bounded and never throws', () => {
    let nested = 'body';
    for (let i = 0; i < 50; i++)
      nested = `Content-Type: multipart/mixed; boundary=b${i}\n\n--b${i}\n${nested}\n--b${i}--\n`;
    expect(() => readMime(Buffer.from(nested))).not.toThrow();
    const many = [
      'Content-Type: multipart/mixed; boundary=x',
      '',
      ...Array(500).fill('--x\n\nhi'),
      '--x--',
    ].join('\n');
    expect(readMime(Buffer.from(many)).parts.length).toBeLessThanOrEqual(MAX_PARTS);
    for (const junk of ['', ':', '\n\n\n', 'Content-Type: multipart/report\n\n--', '\u0000\u0001\u0002'])
      expect(() => readMime(Buffer.from(junk))).not.toThrow();
  });

  test('parseFields keeps repeated fields in order', () => {
    expect(parseFields('Original-Rcpt-To: a@x\nOriginal-Rcpt-To: b@x').get('original-rcpt-to')).toEqual([
      'a@x',
      'b@x',
    ]);
  });
});
