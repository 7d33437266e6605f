import { findUnsafeText, mayHoldUnsafeText, unsafeText } from './json-input';

describe('unsafeText', () => {
  it('finds NUL and lone surrogates, accepts paired surrogates and other text', () => {
    expect(unsafeText('a\u0000b')).toBe('nul');
    expect(unsafeText('x\ud800')).toBe('surrogate');
    expect(unsafeText('\udc00x')).toBe('surrogate');
    expect(unsafeText('\udc00\ud800')).toBe('surrogate');
    expect(unsafeText('😀 \u00e9 \t\r\n \u2028')).toBeNull();
    expect(unsafeText('')).toBeNull();
  });
});

describe('findUnsafeText', () => {
  it('names the field of the first bad string, nested in objects and arrays', () => {
    expect(findUnsafeText({ name: 'ok', content: [{ value: 'x' }, { value: 'a\u0000' }] })).toBe(
      'content[1].value must not contain NUL characters',
    );
    expect(findUnsafeText({ to: [{ name: 'N\ud800' }] })).toBe(
      'to[0].name must be valid Unicode text (it contains a lone surrogate)',
    );
    expect(findUnsafeText('\u0000')).toBe('body must not contain NUL characters');
  });

  it('checks object keys too, naming the object that holds them', () => {
    expect(findUnsafeText({ custom_args: { 'k\u0000': 1 } })).toBe(
      'custom_args must not have keys containing NUL characters',
    );
    expect(findUnsafeText({ a: { '\udfff': 1 } })).toBe('a must not have keys that are invalid Unicode text');
  });

  it('passes clean values of every JSON type', () => {
    expect(findUnsafeText({ a: [1, true, null, 'x', { b: '😀' }], c: -0.5 })).toBeNull();
    expect(findUnsafeText(null)).toBeNull();
  });
});

describe('mayHoldUnsafeText', () => {
  // Characters a generated string is made of: the unsafe ones, their escapes' ingredients, text.
  const POOL = ['\u0000', '\ud800', '\udc00', '\ud83d\ude00', '\\', 'u', '0', 'd', '"', 'é', 'a', ' ', '\n'];
  let seed = 7;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  const str = () => Array.from({ length: rand(6) }, () => POOL[rand(POOL.length)]).join('');
  const value = (depth: number): unknown => {
    const kind = rand(depth > 2 ? 2 : 4);
    if (kind === 0) return str();
    if (kind === 1) return rand(100);
    if (kind === 2) return Array.from({ length: rand(4) }, () => value(depth + 1));
    return Object.fromEntries(Array.from({ length: rand(4) }, () => [str(), value(depth + 1)]));
  };

  it('is true for every JSON text whose parse holds unsafe text (2,000 generated values)', () => {
    let unsafe = 0;
    let skipped = 0;
    for (let i = 0; i < 2000; i++) {
      const text = JSON.stringify(value(0));
      const found = findUnsafeText(JSON.parse(text));
      if (found) unsafe++;
      if (!mayHoldUnsafeText(text)) {
        skipped++;
        expect({ text, found }).toEqual({ text, found: null });
      }
    }
    // Both kinds occur, so the comparison above is not empty on either side.
    expect(unsafe).toBeGreaterThan(100);
    expect(skipped).toBeGreaterThan(100);
  });

  it('answers by the escapes of the text, not by what they decode to', () => {
    expect(mayHoldUnsafeText('{"a":"b\\u0000"}')).toBe(true);
    expect(mayHoldUnsafeText('{"\\ud800":1}')).toBe(true);
    expect(mayHoldUnsafeText('{"a":"C:\\\\users"}')).toBe(true); // `\\u`: walked, finds nothing
    expect(mayHoldUnsafeText('{"a":"😀 é \\n \\" \\\\"}')).toBe(false);
  });
});
