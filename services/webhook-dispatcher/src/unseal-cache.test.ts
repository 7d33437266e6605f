import { UnsealCache } from './unseal-cache';

describe('UnsealCache', () => {
  const sealed = (s: string) => new Uint8Array(Buffer.from(`sealed:${s}`));
  const opener = () => {
    const calls: string[] = [];
    const open = (b: Uint8Array) => {
      const text = Buffer.from(b).toString().slice('sealed:'.length);
      calls.push(text);
      return text;
    };
    return { calls, open };
  };

  it('opens each sealed value once, and a new seal (an update) is opened again', () => {
    const o = opener();
    const cache = new UnsealCache(o.open);
    expect(cache.openText(sealed('a'))).toBe('a');
    expect(cache.openText(sealed('a'))).toBe('a');
    expect(cache.openText(sealed('b'))).toBe('b');
    expect(o.calls).toEqual(['a', 'b']);
  });

  it('keeps at most maxEntries', () => {
    const o = opener();
    const cache = new UnsealCache(o.open, 2);
    for (const s of ['a', 'b', 'c']) cache.openText(sealed(s));
    expect(cache.size).toBeLessThanOrEqual(2);
    expect(cache.openText(sealed('c'))).toBe('c');
  });

  it('a failure to open is not remembered', () => {
    let fail = true;
    const cache = new UnsealCache(() => {
      if (fail) throw new Error('sealed with a different SECRET_KEY');
      return 'x';
    });
    expect(() => cache.openText(sealed('a'))).toThrow('different SECRET_KEY');
    fail = false;
    expect(cache.openText(sealed('a'))).toBe('x');
  });
});
