import {
  InvalidCursorError,
  decodeCursor,
  encodeCursor,
  encodeKeyCursor,
  pageAfter,
  pageAfterKey,
  toKeyPage,
  toPage,
} from './cursor';

describe('page cursors', () => {
  it('round-trips and is opaque', () => {
    const token = encodeCursor('template_01ABC');
    expect(token).not.toContain('template');
    expect(decodeCursor(token)).toBe('template_01ABC');
  });

  it('rejects tokens that are not ours', () => {
    expect(decodeCursor('garbage')).toBeNull();
    expect(decodeCursor(Buffer.from('{"v":2,"after":"x"}').toString('base64url'))).toBeNull();
    expect(decodeCursor(Buffer.from('[1]').toString('base64url'))).toBeNull();
    expect(decodeCursor(Buffer.from('null').toString('base64url'))).toBeNull();
  });

  it('rejects forged tokens whose id is not an id (NUL, lone surrogates, spaces, too long)', () => {
    for (const after of ['a\u0000b', 'x\ud800', 'a b', "'; --", '', 'x'.repeat(201)])
      expect(decodeCursor(Buffer.from(JSON.stringify({ v: 1, after })).toString('base64url'))).toBeNull();
    expect(decodeCursor(encodeCursor('01JABCDEFGHJKMNPQRSTVWXYZ0.12'))).toBe('01JABCDEFGHJKMNPQRSTVWXYZ0.12');
  });

  it('emits a next cursor only when a row beyond the page exists', () => {
    const rows = [{ id: 'a' }, { id: 'b' }, { id: 'c' }];
    expect(toPage(rows, 2, (r) => r.id)).toEqual({ items: rows.slice(0, 2), nextCursor: encodeCursor('b') });
    expect(toPage(rows, 3, (r) => r.id)).toEqual({ items: rows, nextCursor: null });
  });

  it('reads where a page continues: null for the first page, a throw for a token not ours', () => {
    expect(pageAfter(undefined)).toBeNull();
    expect(pageAfter(encodeCursor('b'))).toBe('b');
    expect(() => pageAfter('garbage')).toThrow(InvalidCursorError);
  });
});

describe('composite-key page cursors', () => {
  const twoParts = (k: readonly string[]) => k.length === 2 && k.every((p) => p.length > 0 && p.length < 50);

  it('round-trips a key whose parts hold any text, opaque', () => {
    const key = ['2026-01-05T10:00:00.123456Z', 'jane+news@example.org'];
    const token = encodeKeyCursor(key);
    expect(token).not.toContain('jane');
    expect(pageAfterKey(token, twoParts)).toEqual(key);
    expect(pageAfterKey(undefined, twoParts)).toBeNull();
  });

  it('throws InvalidCursorError for tokens not ours, of the other kind, or refused by the list', () => {
    const bad = [
      'garbage',
      '',
      encodeCursor('01JABC'),
      Buffer.from(JSON.stringify({ v: 2, key: 'a' })).toString('base64url'),
      Buffer.from(JSON.stringify({ v: 2, key: ['a', 1] })).toString('base64url'),
      Buffer.from(JSON.stringify({ v: 3, key: ['a', 'b'] })).toString('base64url'),
      encodeKeyCursor(['a']),
      encodeKeyCursor(['a', 'x'.repeat(50)]),
    ];
    for (const token of bad) expect(() => pageAfterKey(token, twoParts)).toThrow(InvalidCursorError);
  });

  it('emits a next key only when a row beyond the page exists', () => {
    const rows = [
      { at: '1', email: 'c' },
      { at: '1', email: 'b' },
      { at: '0', email: 'a' },
    ];
    const keyOf = (r: { at: string; email: string }) => [r.at, r.email];
    expect(toKeyPage(rows, 2, keyOf)).toEqual({
      items: rows.slice(0, 2),
      nextCursor: encodeKeyCursor(['1', 'b']),
    });
    expect(toKeyPage(rows, 3, keyOf)).toEqual({ items: rows, nextCursor: null });
  });
});
