import { MAX_ADDRESSES, MAX_ADDRESS_FIELD_BYTES, MAX_HEADER_BYTES, scanHeaderBlock } from './header-block';
import { MAX_PARTS, messageHeaderProblem, partHeadersProblem, scanPartHeaders } from './part-headers';

const B = (s: string) => Buffer.from(s, 'latin1');
const parts = (raw: string) => {
  const buf = B(raw);
  return scanPartHeaders(buf, scanHeaderBlock(buf));
};
const multipart = (boundary: string, body: string, type = `multipart/mixed; boundary="${boundary}"`) =>
  `From: a@b.example\r\nContent-Type: ${type}\r\n\r\n${body}`;

describe('scanPartHeaders', () => {
  test('a single-part message has no part headers (nothing is scanned)', () => {
    expect(parts('From: a@b.example\r\nSubject: x\r\n\r\n--b\r\nTo: c@d\r\n\r\n')).toMatchObject({
      bytes: 0,
      lines: 0,
    });
  });

  test('each part opened by a declared boundary counts its header block; closing and foreign lines open none', () => {
    const s = parts(
      multipart(
        'b',
        'preamble\r\n--b\r\nContent-Type: text/plain\r\nTo: c@d.example\r\n\r\nbody\r\n--other\r\nTo: x@y\r\n\r\n' +
          '--b  \r\nX-One: 1\r\n\r\nbody\r\n--b--\r\n--b\r\n',
      ),
    );
    // the part after --b-- is still a part to a MIME reader: three blocks
    expect(s.fields.get('to')).toEqual({ count: 1, maxBytes: 17, totalBytes: 17 });
    expect(s.fields.get('x-one')?.count).toBe(1);
    expect(s.lines).toBe(3);
    expect(s.addresses).toBe(1);
  });

  test('a boundary declared by a part (unquoted, in any case, folded) opens the parts inside it', () => {
    const s = parts(
      multipart(
        'outer',
        '--outer\r\nContent-Type: multipart/alternative;\r\n BOUNDARY=inner\r\n\r\n' +
          '--inner\r\nCc: a@b.example, c@d.example\r\n\r\nx\r\n--inner--\r\n--outer--\r\n',
      ),
    );
    expect(s.fields.get('cc')?.count).toBe(1);
    expect(s.addresses).toBe(2);
  });

  test('bare LF line ends, and a body whose first line is the delimiter', () => {
    const s = parts('From: a\nContent-Type: multipart/mixed; boundary=zz\n\n--zz\nTo: q@r\n\nbody\n--zz--\n');
    expect(s.fields.get('to')?.count).toBe(1);
  });

  test(`looks at most at MAX_PARTS (${MAX_PARTS}) parts, as mailsplit reads no more`, () => {
    const s = parts(multipart('b', '--b\r\nX-P: 1\r\n\r\nx\r\n'.repeat(MAX_PARTS + 500)));
    expect(s.lines).toBe(MAX_PARTS);
  });
});

describe('partHeadersProblem and messageHeaderProblem (what the MX answers 552 5.3.4 to)', () => {
  test('an ordinary multipart message passes', () => {
    const raw = B(
      multipart(
        'b',
        '--b\r\nContent-Type: text/plain\r\n\r\nhi\r\n--b\r\nContent-Type: image/png\r\n\r\nx\r\n--b--\r\n',
      ),
    );
    expect(messageHeaderProblem(raw)).toBeNull();
  });

  test('one part whose To holds 128 KB of groups: over the address limit of the parts', () => {
    const raw = B(multipart('b', `--b\r\nTo: ${'g:a@b.c;'.repeat(16 * 1024)}\r\n\r\nx\r\n--b--\r\n`));
    expect(messageHeaderProblem(raw)).toBe(
      `MIME part address fields together exceed ${MAX_ADDRESS_FIELD_BYTES} bytes`,
    );
  });

  test('address fields of many parts count together', () => {
    const part = `--b\r\nTo: ${'"n" <a@b.example>, '.repeat(50)}\r\n\r\nx\r\n`; // 51 entries, ~1 KB
    const under = Math.floor(MAX_ADDRESSES / 51);
    expect(messageHeaderProblem(B(multipart('b', part.repeat(under))))).toBeNull();
    expect(messageHeaderProblem(B(multipart('b', part.repeat(under + 1))))).toBe(
      `MIME part address fields together list more than ${MAX_ADDRESSES} addresses`,
    );
  });

  test('part headers over 512 KB together, however they are split among parts', () => {
    const part = `--b\r\nX-Pad: ${'p'.repeat(60 * 1024)}\r\n\r\nx\r\n`;
    expect(messageHeaderProblem(B(multipart('b', part.repeat(8))))).toBeNull();
    expect(messageHeaderProblem(B(multipart('b', part.repeat(9))))).toBe(
      `MIME part headers together exceed ${MAX_HEADER_BYTES} bytes`,
    );
  });

  test('the message header is checked first', () => {
    const raw = B(
      `X: a\r\n${' b\r\n'.repeat(20_000)}Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\n\r\n`,
    );
    expect(messageHeaderProblem(raw)).toBe('Message header exceeds 10000 lines');
  });

  test('no parts: no problem', () => {
    expect(partHeadersProblem(parts('From: a\r\n\r\nbody'))).toBeNull();
  });
});
