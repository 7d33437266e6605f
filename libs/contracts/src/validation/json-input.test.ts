import { findUnsafeText, unsafeText } from './json-input';

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
