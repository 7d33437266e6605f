import { parseUidSet, toUidSet } from './uid-set';

describe('UID sets', () => {
  it('write ascending ranges, without duplicates', () => {
    expect(toUidSet([9, 1, 2, 3, 5, 3])).toBe('1:3,5,9');
    expect(toUidSet([])).toBe('');
    expect(toUidSet([7])).toBe('7');
    expect(toUidSet(Array.from({ length: 10_000 }, (_, i) => 10_000 - i))).toBe('1:10000');
  });

  it('read back what they wrote; reversed ranges and junk are tolerated', () => {
    const uids = [1, 2, 3, 5, 9, 10, 11, 40];
    expect(parseUidSet(toUidSet(uids))).toEqual(uids);
    expect(parseUidSet('5:3, x, 0, 8')).toEqual([3, 4, 5, 8]);
    expect(parseUidSet('')).toEqual([]);
  });
});
