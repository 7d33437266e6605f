import {
  AUTH_MAX_ARC_FIELDS,
  AUTH_MAX_FIELD_BYTES,
  AUTH_MAX_HEADER_BYTES,
  AUTH_MAX_HEADER_LINES,
  AUTH_MAX_SIGNATURES,
  MAX_ADDRESSES,
  MAX_ADDRESS_FIELD_BYTES,
  MAX_HEADER_BYTES,
  MAX_HEADER_LINES,
  MAX_PARAMETER_FIELD_BYTES,
  authenticationProblem,
  headerBlockProblem,
  scanHeaderBlock,
} from './header-block';

const B = (s: string) => Buffer.from(s, 'latin1');
const FROM = 'From: a@example.org\r\n';
/** A header block of exactly `bytes` bytes (one X-Pad field folded into lines of `width` bytes). */
function blockOf(bytes: number, width = 100): string {
  let head = FROM;
  head += 'X-Pad: ';
  while (head.length + width <= bytes - 2) head += `${'p'.repeat(width - 4)}\r\n `;
  head += 'p'.repeat(bytes - 2 - head.length);
  return `${head}\r\n`;
}

describe('scanHeaderBlock', () => {
  test('sizes, lines and fields of a header block, folded lines counted with their field', () => {
    const head = 'From: a@example.org\r\nSubject: one\r\n two\r\nsubject: again\r\n';
    const s = scanHeaderBlock(B(`${head}\r\nbody: not a field\r\n`));
    expect(s.bytes).toBe(head.length);
    expect(s.lines).toBe(4);
    expect(s.truncated).toBe(false);
    expect(s.fields.get('from')).toEqual({ count: 1, maxBytes: 21, totalBytes: 21 });
    expect(s.fields.get('subject')).toEqual({ count: 2, maxBytes: 20, totalBytes: 36 });
    expect(s.fields.has('body')).toBe(false);
  });

  test('bare LF line ends, and a message of headers only without a final line end', () => {
    const lf = scanHeaderBlock(B('From: a\nTo: b\n\nbody\n'));
    expect([lf.bytes, lf.lines]).toEqual([14, 2]);
    const only = scanHeaderBlock(B('From: a\r\nSubject: x'));
    expect([only.bytes, only.lines, only.fields.get('subject')?.maxBytes]).toEqual([19, 2, 10]);
    const none = scanHeaderBlock(B('\r\nbody'));
    expect([none.bytes, none.lines, none.fields.size]).toEqual([0, 0, 0]);
  });

  test('a line without a colon or with an overlong name counts under ""', () => {
    const s = scanHeaderBlock(B(`no colon here\r\n${'n'.repeat(200)}: v\r\n\r\n`));
    expect(s.fields.get('')?.count).toBe(2);
  });

  test('reads at most MAX_HEADER_BYTES (+ the empty line) of a message however long it is', () => {
    const s = scanHeaderBlock(B(`${FROM}X: ${'x'.repeat(5 * MAX_HEADER_BYTES)}\r\n\r\nbody`));
    expect(s.truncated).toBe(true);
    expect(s.bytes).toBeLessThanOrEqual(MAX_HEADER_BYTES + 3);
    expect(s.bytes).toBeGreaterThan(MAX_HEADER_BYTES);
  });

  test('stops counting one line past MAX_HEADER_LINES', () => {
    const s = scanHeaderBlock(B(`${FROM}X: a\r\n${' b\r\n'.repeat(3 * MAX_HEADER_LINES)}\r\nbody`));
    expect(s.truncated).toBe(true);
    expect(s.lines).toBe(MAX_HEADER_LINES + 1);
  });
});

describe('headerBlockProblem (what the MX answers 552 5.3.4 to)', () => {
  const problem = (raw: string) => headerBlockProblem(scanHeaderBlock(B(raw)));

  test('a header block of exactly MAX_HEADER_BYTES passes, one byte more does not', () => {
    expect(blockOf(MAX_HEADER_BYTES).length).toBe(MAX_HEADER_BYTES);
    expect(problem(`${blockOf(MAX_HEADER_BYTES)}\r\nbody\r\n`)).toBeNull();
    expect(problem(`${blockOf(MAX_HEADER_BYTES + 1)}\r\nbody\r\n`)).toBe(
      `Message header exceeds ${MAX_HEADER_BYTES} bytes`,
    );
    // the same without any empty line (the whole message is header)
    expect(problem(blockOf(MAX_HEADER_BYTES + 1))).toBe(`Message header exceeds ${MAX_HEADER_BYTES} bytes`);
    expect(problem(blockOf(MAX_HEADER_BYTES))).toBeNull();
  });

  test('MAX_HEADER_LINES lines pass, one more does not (folded lines count)', () => {
    const lines = (n: number) => `${FROM}X: a\r\n${' b\r\n'.repeat(n - 2)}\r\nbody\r\n`;
    expect(problem(lines(MAX_HEADER_LINES))).toBeNull();
    expect(problem(lines(MAX_HEADER_LINES + 1))).toBe(`Message header exceeds ${MAX_HEADER_LINES} lines`);
    // the message: one header folded into 68k one-character lines
    expect(problem(`${FROM}X: a\r\n${' b\r\n'.repeat(68_000)}\r\nbody`)).toMatch(/exceeds 10000 lines/);
  });

  test('the address fields together may take MAX_ADDRESS_FIELD_BYTES', () => {
    const entry = `"${'n'.repeat(40)}" <a@b.example>, `; // 58 bytes: the entry cap stays far
    const field = (name: string, bytes: number) => {
      const head = `${name}: ${entry.repeat(Math.floor((bytes - name.length - 4) / entry.length))}`;
      return `${head}${'x'.repeat(bytes - 2 - head.length)}\r\n`;
    };
    const at = (bytes: number) => `${field('To', Math.floor(bytes / 2))}${field('Cc', Math.ceil(bytes / 2))}`;
    expect(at(MAX_ADDRESS_FIELD_BYTES).length).toBe(MAX_ADDRESS_FIELD_BYTES);
    expect(problem(`${at(MAX_ADDRESS_FIELD_BYTES)}\r\nbody`)).toBeNull();
    expect(problem(`${at(MAX_ADDRESS_FIELD_BYTES + 1)}\r\nbody`)).toBe(
      `Message address fields exceed ${MAX_ADDRESS_FIELD_BYTES} bytes`,
    );
    // other fields of that size are not address fields
    expect(problem(`X-Note: ${'a@b.c,'.repeat(40_000)}\r\n\r\nbody`)).toBeNull();
  });

  test('and list at most MAX_ADDRESSES entries: the fields and their , and ; (folded lines too)', () => {
    const entries = (n: number) =>
      `From: a@b.c\r\nTo: g:;\r\n ${';'.repeat(n - 3)}\r\nSubject: ;;;\r\n\r\nbody`;
    expect(scanHeaderBlock(B(entries(MAX_ADDRESSES))).addresses).toBe(MAX_ADDRESSES);
    expect(problem(entries(MAX_ADDRESSES))).toBeNull();
    expect(problem(entries(MAX_ADDRESSES + 1))).toBe(
      `Message address fields list more than ${MAX_ADDRESSES} addresses`,
    );
  });
});

describe('authenticationProblem (what mailauth is never given)', () => {
  const problem = (raw: string) => authenticationProblem(scanHeaderBlock(B(raw)));
  const sig = (i: number) => `DKIM-Signature: v=1; a=rsa-sha256; d=s${i}.example; s=k; h=from; bh=x; b=x\r\n`;

  test('an ordinary message is given to mailauth', () => {
    expect(problem(`${FROM}${sig(1)}${sig(2)}Subject: hi\r\n\r\nbody`)).toBeNull();
  });

  test('what the MX refuses is never given either', () => {
    expect(problem(`${FROM}X: a\r\n${' b\r\n'.repeat(MAX_HEADER_LINES)}\r\n`)).toMatch(/exceeds/);
  });

  test('each limit at its value passes and one more does not', () => {
    const lines = (n: number) => `${FROM}X: a\r\n${' b\r\n'.repeat(n - 2)}\r\nbody`;
    expect(problem(lines(AUTH_MAX_HEADER_LINES))).toBeNull();
    expect(problem(lines(AUTH_MAX_HEADER_LINES + 1))).toBe(`header over ${AUTH_MAX_HEADER_LINES} lines`);

    expect(problem(`${blockOf(AUTH_MAX_HEADER_BYTES, 1000)}\r\nbody`)).toBeNull();
    expect(problem(`${blockOf(AUTH_MAX_HEADER_BYTES + 1, 1000)}\r\nbody`)).toBe(
      `header over ${AUTH_MAX_HEADER_BYTES} bytes`,
    );

    const sigs = (n: number) => `${FROM}${Array.from({ length: n }, (_, i) => sig(i)).join('')}\r\nbody`;
    expect(problem(sigs(AUTH_MAX_SIGNATURES))).toBeNull();
    expect(problem(sigs(AUTH_MAX_SIGNATURES + 1))).toBe(`more than ${AUTH_MAX_SIGNATURES} DKIM signatures`);

    const arc = (n: number) =>
      `${FROM}${Array.from({ length: n }, (_, i) => `${['ARC-Seal', 'ARC-Message-Signature', 'ARC-Authentication-Results'][i % 3]}: i=${1 + Math.floor(i / 3)}\r\n`).join('')}\r\n`;
    expect(problem(arc(AUTH_MAX_ARC_FIELDS))).toBeNull();
    expect(problem(arc(AUTH_MAX_ARC_FIELDS + 1))).toBe(`more than ${AUTH_MAX_ARC_FIELDS} ARC header fields`);
  });

  test.each(['From', 'Sender', 'Return-Path', 'Content-Type', 'DKIM-Signature', 'ARC-Seal'])(
    'a %s field over AUTH_MAX_FIELD_BYTES is not given; other fields may be longer',
    (name) => {
      const field = (bytes: number) => `${name}: ${'v'.repeat(bytes - name.length - 4)}\r\n`;
      expect(field(AUTH_MAX_FIELD_BYTES).length).toBe(AUTH_MAX_FIELD_BYTES);
      expect(problem(`${field(AUTH_MAX_FIELD_BYTES)}\r\nbody`)).toBeNull();
      expect(problem(`${field(AUTH_MAX_FIELD_BYTES + 1)}\r\nbody`)).toBe(
        `${name.toLowerCase()} field over ${AUTH_MAX_FIELD_BYTES} bytes`,
      );
      expect(problem(`${FROM}To: ${'t@b.c,'.repeat(1500)}\r\n\r\nbody`)).toBeNull();
    },
  );
});

describe('parameter fields (Content-Type, Content-Disposition, DKIM-Signature)', () => {
  const problem = (raw: string) => headerBlockProblem(scanHeaderBlock(B(raw)));
  /** Content-Type and DKIM-Signature fields of exactly `bytes` together. */
  const fields = (bytes: number) => {
    const dkim = `DKIM-Signature: v=1; d=x; ${'h'.repeat(Math.floor(bytes / 2) - 28)}\r\n`;
    const type = `Content-Type: text/plain; ${'p'.repeat(bytes - dkim.length - 28)}\r\n`;
    return `${dkim}${type}`;
  };

  test('may take MAX_PARAMETER_FIELD_BYTES together, one byte more is refused', () => {
    expect(fields(MAX_PARAMETER_FIELD_BYTES).length).toBe(MAX_PARAMETER_FIELD_BYTES);
    expect(problem(`${FROM}${fields(MAX_PARAMETER_FIELD_BYTES)}\r\nbody`)).toBeNull();
    expect(problem(`${FROM}${fields(MAX_PARAMETER_FIELD_BYTES + 1)}\r\nbody`)).toBe(
      `Message Content-Type, Content-Disposition and DKIM-Signature fields exceed ${MAX_PARAMETER_FIELD_BYTES} bytes`,
    );
    expect(
      problem(`${FROM}Content-Disposition: attachment; ${'f'.repeat(MAX_PARAMETER_FIELD_BYTES)}\r\n\r\nbody`),
    ).toMatch(/^Message Content-Type, Content-Disposition and DKIM-Signature fields exceed/);
  });
});
