import { RequestedRows, STRAY_ALLOWANCE } from './requested-rows';

describe('RequestedRows', () => {
  it('takes the first complete row of each requested UID, once', () => {
    const rows = new RequestedRows([3, 5]);
    expect(rows.accept(5, true)).toBe('take');
    expect(rows.accept(5, true)).toBe('stray');
    expect(rows.accept(3, true)).toBe('take');
    expect(rows.strays).toBe(1);
  });

  it('ignores and counts rows of UIDs nobody asked for, rows without a UID and incomplete rows', () => {
    const rows = new RequestedRows([1, 2]);
    expect(rows.accept(9, true)).toBe('stray');
    expect(rows.accept(undefined, true)).toBe('stray');
    // An unsolicited flag update of a requested message is not its source: it is still awaited.
    expect(rows.accept(1, false)).toBe('stray');
    expect(rows.accept(1, true)).toBe('take');
    expect(rows.strays).toBe(3);
  });

  it('a flood past the requested count plus the allowance is reported once the bound is passed', () => {
    const uids = [1, 2, 3];
    const rows = new RequestedRows(uids);
    expect(rows.maxStrays).toBe(uids.length + STRAY_ALLOWANCE);
    const verdicts = Array.from({ length: rows.maxStrays + 1 }, (_, i) => rows.accept(10_000 + i, true));
    expect(verdicts.filter((v) => v === 'stray')).toHaveLength(rows.maxStrays);
    expect(verdicts.at(-1)).toBe('flood');
    // Duplicate UIDs in the request count once.
    expect(new RequestedRows([4, 4, 4]).maxStrays).toBe(1 + STRAY_ALLOWANCE);
  });
});
