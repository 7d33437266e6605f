import {
  compareIds,
  maxSliceMs,
  newestFirst,
  nextSliceMs,
  nextUntil,
  progressStep,
  sliceEndingAt,
  windowPercent,
} from './slices';

const t = (s: string) => new Date(s);

describe('slices', () => {
  it('walk the window newest first without gaps or overlap, down to the start second', () => {
    const start = t('2026-01-01T00:00:00Z');
    const end = t('2026-01-01T00:00:25Z');
    const slices = [];
    for (let until: Date | null = end; until; ) {
      const s = sliceEndingAt(until, start, 10_000);
      slices.push([s.since.toISOString().slice(17, 19), s.until.toISOString().slice(17, 19)]);
      until = nextUntil(s, start);
    }
    expect(slices).toEqual([
      ['16', '25'],
      ['06', '15'],
      ['00', '05'],
    ]);
  });

  it('percent is the share of the window walked; steps of 10%', () => {
    const start = t('2026-01-01T00:00:00Z');
    const end = t('2026-01-01T00:01:40Z');
    expect(windowPercent(start, end, end)).toBe(0);
    expect(windowPercent(start, end, t('2026-01-01T00:01:15Z'))).toBe(25);
    expect(windowPercent(start, end, start)).toBe(100);
    expect(windowPercent(end, end, end)).toBe(100);
    expect([0, 9, 10, 55, 100].map(progressStep)).toEqual([0, 0, 1, 5, 10]);
  });

  it('orders newest first; equal times by id (UIDs by value, other ids as text)', () => {
    const refs = [
      { id: '9', receivedAt: t('2026-01-02T00:00:00Z') },
      { id: '2', receivedAt: t('2026-01-03T00:00:00Z') },
      { id: '10', receivedAt: t('2026-01-02T00:00:00Z') },
    ];
    expect(newestFirst(refs).map((r) => r.id)).toEqual(['2', '10', '9']);
    expect(['00000018c0000002', '00000018c000000a', '00000018c0000001'].sort(compareIds)).toEqual([
      '00000018c0000001',
      '00000018c0000002',
      '00000018c000000a',
    ]);
    expect(compareIds('AAkALgB', 'AAkALgA')).toBeGreaterThan(0);
    expect(compareIds('12', '12')).toBe(0);
  });

  it('slice length grows over sparse slices and shrinks over dense ones, within bounds', () => {
    const o = { minMs: 1000, maxMs: 16_000, target: 100 };
    expect(nextSliceMs(1000, 10, o)).toBe(2000);
    expect(nextSliceMs(8000, 99, o)).toBe(16_000);
    expect(nextSliceMs(16_000, 0, o)).toBe(16_000);
    expect(nextSliceMs(4000, 150, o)).toBe(4000);
    expect(nextSliceMs(4000, 201, o)).toBe(2000);
    expect(nextSliceMs(1000, 10_000, o)).toBe(1000);
    expect(nextSliceMs(1000, 0, { ...o, maxMs: 500 })).toBe(1000);
  });

  it('the longest slice is a tenth of the window, in whole seconds, never below the minimum', () => {
    const start = t('2026-01-01T00:00:00Z');
    expect(maxSliceMs(start, t('2026-01-01T00:01:40Z'), 1000)).toBe(10_000);
    expect(maxSliceMs(start, t('2026-01-01T00:01:45Z'), 1000)).toBe(10_000);
    expect(maxSliceMs(start, t('2026-01-01T00:00:05Z'), 3000)).toBe(3000);
  });
});
