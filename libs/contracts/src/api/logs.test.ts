import { parseLogsQuery, parseTimeBound } from './logs';

describe('parseTimeBound', () => {
  it('reads bare dates as whole UTC days', () => {
    expect(parseTimeBound('2024-02-29', 'start')).toEqual({
      at: '2024-02-29T00:00:00.000Z',
      exclusive: false,
    });
    expect(parseTimeBound('2024-02-29', 'end')).toEqual({ at: '2024-03-01T00:00:00.000Z', exclusive: true });
    expect(parseTimeBound('2023-12-31', 'end')).toEqual({ at: '2024-01-01T00:00:00.000Z', exclusive: true });
  });

  it('keeps RFC 3339 date-times as given (uppercased), inclusive', () => {
    expect(parseTimeBound('2024-01-02t03:04:05.123456z', 'end')).toEqual({
      at: '2024-01-02T03:04:05.123456Z',
      exclusive: false,
    });
    expect(parseTimeBound('2024-01-02T03:04:05+05:30', 'start')).toEqual({
      at: '2024-01-02T03:04:05+05:30',
      exclusive: false,
    });
  });

  it.each([
    '2023-02-29',
    '2024-13-01',
    '2024-01-01T24:00:00Z',
    '2024-01-01T10:00:00',
    '2024-01-01 10:00:00Z',
    '20240101',
    'now',
  ])('rejects %s', (v) => expect(parseTimeBound(v, 'start')).toBeNull());
});

describe('parseLogsQuery', () => {
  it('defaults pageSize and drops empty parameters', () => {
    expect(parseLogsQuery({ status: '', email: 'A@Bücher.example' })).toEqual({
      success: true,
      data: { pageSize: 20, email: 'A@xn--bcher-kva.example' },
    });
  });
});
