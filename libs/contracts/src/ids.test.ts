import { IdPrefix, hasIdPrefix, isUlid, newId } from './ids';

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
