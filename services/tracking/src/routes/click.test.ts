import { headerSafeUrl } from './click';

describe('headerSafeUrl', () => {
  it('keeps printable ASCII exactly, percent-encodes the rest as UTF-8', () => {
    const signed = 'https://blog.example/wp-login.php?action=rp&key=Xy1%2Bz&login=ada#frag';
    expect(headerSafeUrl(signed)).toBe(signed);
    expect(headerSafeUrl('https://bücher.example/a b')).toBe('https://b%C3%BCcher.example/a%20b');
    expect(headerSafeUrl('https://x.example/\r\nSet-Cookie: a=1')).toBe(
      'https://x.example/%0D%0ASet-Cookie:%20a=1',
    );
  });
});
