import { IdPrefix, hasIdPrefix, isUlid, newId, ulid } from './ids';

describe('ids', () => {
  it('issues prefixed, sortable ULIDs', () => {
    const a = newId(IdPrefix.template);
    const b = newId(IdPrefix.template);
    expect(a).toMatch(/^template_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(b > a).toBe(true);
    expect(hasIdPrefix(a, IdPrefix.template)).toBe(true);
    expect(hasIdPrefix(a, IdPrefix.domain)).toBe(false);
    expect(isUlid('not-a-ulid')).toBe(false);
  });
});

describe('ulid randomness', () => {
  it('spreads random characters over the whole alphabet and never repeats an id', () => {
    const ids = Array.from({ length: 5000 }, () => ulid());
    expect(new Set(ids).size).toBe(ids.length);
    // Every character of the alphabet turns up in the last position.
    const seen = new Set(ids.map((id) => id[25]));
    expect(seen.size).toBe(32);
  });
});
