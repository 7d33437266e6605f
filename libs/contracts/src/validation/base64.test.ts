import { decodedBase64Length, isBase64, stripBase64Whitespace } from './base64';

describe('base64', () => {
  it.each(['', 'YQ==', 'YWI=', 'YWJj', 'aGVsbG8gd29ybGQ=', '+/+/'])('accepts %j', (v) =>
    expect(isBase64(v)).toBe(true),
  );
  it.each(['YQ=', 'YQ', 'Y===', 'YW=j', 'ab-_', 'YWJj\n', 'ü===', '=AAA'])('rejects %j', (v) =>
    expect(isBase64(v)).toBe(false),
  );

  it('computes the decoded length', () => {
    for (const s of ['', 'a', 'ab', 'abc', 'abcd', 'x'.repeat(1001)]) {
      const b64 = Buffer.from(s).toString('base64');
      expect(decodedBase64Length(b64)).toBe(Buffer.byteLength(s));
    }
  });

  it('strips MIME line breaks', () => {
    expect(stripBase64Whitespace('aGVs\r\nbG8=\n')).toBe('aGVsbG8=');
    expect(stripBase64Whitespace('YWJj')).toBe('YWJj');
  });
});
