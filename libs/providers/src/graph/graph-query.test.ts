import {
  inGraphWindow,
  kqlDate,
  listParams,
  odataDateTime,
  participantSearch,
  receivedFilter,
} from './graph-query';

const w = { since: new Date('2024-01-10T08:30:00Z'), until: new Date('2024-01-20T17:45:59.400Z') };

describe('graph listing queries', () => {
  it('writes OData date-times in whole UTC seconds', () => {
    expect(odataDateTime(new Date('2024-01-10T08:30:00.999Z'))).toBe('2024-01-10T08:30:00Z');
    expect(kqlDate(new Date('2024-01-10T23:59:59Z'))).toBe('2024-01-10');
  });

  it('filters receivedDateTime on the inclusive window', () => {
    expect(receivedFilter(w)).toBe(
      'receivedDateTime ge 2024-01-10T08:30:00Z and receivedDateTime lt 2024-01-20T17:46:00Z',
    );
  });

  it('searches participants over the window widened to whole days plus one on each side', () => {
    expect(participantSearch('ann@example.com', w)).toBe(
      '"participants:ann@example.com AND received>=2024-01-09 AND received<=2024-01-21"',
    );
    expect(() => participantSearch('ann@example.com" OR "x', w)).toThrow(TypeError);
  });

  it('lists with $filter + $orderby, or with $search alone', () => {
    const plain = listParams(w, null, 50);
    expect(plain.get('$filter')).toBe(receivedFilter(w));
    expect(plain.get('$orderby')).toBe('receivedDateTime desc');
    expect(plain.get('$search')).toBeNull();
    expect(plain.get('$top')).toBe('50');
    const search = listParams(w, 'ann@example.com', 50);
    expect(search.get('$search')).toContain('participants:ann@example.com');
    expect(search.get('$filter')).toBeNull();
    expect(search.get('$orderby')).toBeNull();
  });

  it('keeps the exact window', () => {
    expect(inGraphWindow(w.since, w)).toBe(true);
    expect(inGraphWindow(new Date('2024-01-20T17:45:59.900Z'), w)).toBe(true);
    expect(inGraphWindow(new Date('2024-01-20T17:46:00Z'), w)).toBe(false);
    expect(inGraphWindow(new Date('2024-01-10T08:29:59Z'), w)).toBe(false);
  });
});
