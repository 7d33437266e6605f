import { InvalidCursorError, decodeCursor, encodeCursor, pageAfter, toPage } from './cursor';

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
