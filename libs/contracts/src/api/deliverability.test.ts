import {
  DmarcSummaryResponseSchema,
  REPORTS_RANGE_TOO_LONG,
  TlsReportsResponseSchema,
  parseDeliverabilityReportsQuery,
  reportDays,
  reportsRange,
  tlsReportDays,
} from './deliverability';

const NOW = Date.parse('2026-11-27T16:15:42.123Z');
const D = 86_400_000;
const at = (iso: string) => Date.parse(iso);

function range(query: Record<string, string>) {
  const q = parseDeliverabilityReportsQuery(query);
  if (!q.success) throw new Error(q.error);
  return reportsRange(q.data, NOW);
}

describe('reportsRange', () => {
  it('defaults to the last 30 days including today (UTC)', () => {
    expect(range({})).toEqual({ from: at('2026-10-29T00:00:00Z'), to: at('2026-11-28T00:00:00Z') });
    expect(reportDays(range({}) as { from: number; to: number })).toEqual({
      from: at('2026-10-29T00:00:00Z'),
      to: at('2026-11-28T00:00:00Z'),
    });
  });

  it('takes a bare date as its whole UTC day', () => {
    expect(range({ startDate: '2026-11-20', endDate: '2026-11-20' })).toEqual({
      from: at('2026-11-20T00:00:00Z'),
      to: at('2026-11-21T00:00:00Z'),
    });
  });

  it('takes instants as given, an end inclusively; the days round outward', () => {
    const r = range({ startDate: '2026-11-20T10:00:00Z', endDate: '2026-11-21T09:00:00Z' });
    expect(r).toEqual({ from: at('2026-11-20T10:00:00Z'), to: at('2026-11-21T09:00:00Z') + 1 });
    expect(reportDays(r as { from: number; to: number })).toEqual({
      from: at('2026-11-20T00:00:00Z'),
      to: at('2026-11-22T00:00:00Z'),
    });
  });

  it('fills a missing side: 30 days before an end, today after a start', () => {
    expect(range({ endDate: '2026-06-30' })).toEqual({
      from: at('2026-06-01T00:00:00Z'),
      to: at('2026-07-01T00:00:00Z'),
    });
    expect(range({ startDate: '2026-11-25' })).toEqual({
      from: at('2026-11-25T00:00:00Z'),
      to: at('2026-11-28T00:00:00Z'),
    });
  });

  it('a start after today is an empty range with no days', () => {
    const r = range({ startDate: '2026-12-05' }) as { from: number; to: number };
    expect(r.to).toBe(r.from);
    expect(reportDays(r)).toEqual({ from: r.from, to: r.from });
  });

  it('refuses more than 366 days, bad dates and a start after the end', () => {
    expect(range({ startDate: '2025-01-01', endDate: '2025-12-31' })).not.toBe(REPORTS_RANGE_TOO_LONG);
    expect(range({ startDate: '2024-01-01', endDate: '2024-12-31' })).not.toBe(REPORTS_RANGE_TOO_LONG);
    expect(range({ startDate: '2024-01-01', endDate: '2025-01-01' })).toBe(REPORTS_RANGE_TOO_LONG);
    expect(parseDeliverabilityReportsQuery({ startDate: '2026-02-30' })).toEqual({
      success: false,
      error: 'startDate must be an RFC 3339 date-time or a YYYY-MM-DD date',
    });
    expect(parseDeliverabilityReportsQuery({ endDate: 'yesterday' })).toEqual({
      success: false,
      error: 'endDate must be an RFC 3339 date-time or a YYYY-MM-DD date',
    });
    expect(parseDeliverabilityReportsQuery({ startDate: '2026-11-21', endDate: '2026-11-20' })).toEqual({
      success: false,
      error: 'startDate must not be after endDate',
    });
    expect(parseDeliverabilityReportsQuery({ startDate: '', endDate: '' })).toEqual({
      success: true,
      data: {},
    });
  });
});

describe('tlsReportDays', () => {
  it('lists every day in order, zeros where nothing started', () => {
    const from = at('2026-11-01T00:00:00Z');
    const found = new Map([
      [from + D, { reports: 2, successful: 10, failed: 3, failure_types: { 'certificate-expired': 3 } }],
    ]);
    const days = tlsReportDays({ from, to: from + 3 * D }, found);
    expect(days).toEqual([
      { date: '2026-11-01', reports: 0, successful: 0, failed: 0, failure_types: {} },
      {
        date: '2026-11-02',
        reports: 2,
        successful: 10,
        failed: 3,
        failure_types: { 'certificate-expired': 3 },
      },
      { date: '2026-11-03', reports: 0, successful: 0, failed: 0, failure_types: {} },
    ]);
    expect(TlsReportsResponseSchema.safeParse({ success: true, data: { reports: 2, days } }).success).toBe(
      true,
    );
  });
});

describe('answer schemas', () => {
  it('accept a summary and refuse a malformed one', () => {
    const data = {
      reports: 1,
      messages: 3,
      dmarc_pass: 2,
      dkim_aligned_pass: 2,
      spf_aligned_pass: 1,
      sources: [
        {
          source_ip: '192.0.2.1',
          count: 3,
          disposition: 'none',
          dkim: 'pass',
          spf: 'fail',
          header_from: 'example.com',
          reporter: 'google.com',
        },
      ],
    };
    expect(DmarcSummaryResponseSchema.safeParse({ success: true, data }).success).toBe(true);
    expect(
      DmarcSummaryResponseSchema.safeParse({ success: true, data: { ...data, messages: -1 } }).success,
    ).toBe(false);
  });
});
