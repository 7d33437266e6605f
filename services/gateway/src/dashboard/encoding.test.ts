import { pickCoding } from './encoding';

describe('pickCoding', () => {
  it('prefers brotli, then gzip, else the plain file', () => {
    expect(pickCoding('gzip, deflate, br, zstd')).toBe('br');
    expect(pickCoding('gzip, deflate')).toBe('gzip');
    expect(pickCoding('deflate')).toBe('identity');
    expect(pickCoding(undefined)).toBe('identity');
    expect(pickCoding('')).toBe('identity');
  });

  it('honours q=0 and the * wildcard', () => {
    expect(pickCoding('br;q=0, gzip')).toBe('gzip');
    expect(pickCoding('br;q=0, gzip;q=0')).toBe('identity');
    expect(pickCoding('*')).toBe('br');
    expect(pickCoding('*, br;q=0')).toBe('gzip');
    expect(pickCoding('br;q=0.5')).toBe('br');
  });
});
