import { oneLine, scrubSecret } from './credential-check';

describe('credential check messages', () => {
  it('removes the password and its AUTH encodings', () => {
    const creds = { username: 'me', password: 's3cret!' };
    const plain = Buffer.from('\u0000me\u0000s3cret!').toString('base64');
    expect(scrubSecret(`bad s3cret! ${Buffer.from('s3cret!').toString('base64')} ${plain}`, creds)).toBe(
      'bad *** *** ***',
    );
    expect(scrubSecret('nothing here', creds)).toBe('nothing here');
  });
  it('keeps one readable line', () => {
    expect(oneLine('a\n  b\tc\n')).toBe('a b c');
    expect(oneLine('x'.repeat(600))).toHaveLength(501);
  });
});
