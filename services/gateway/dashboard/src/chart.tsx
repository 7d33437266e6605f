/**
 * The per-day chart of Overview: uPlot (canvas, ~50 KB minified, no dependencies) with one line
 * per counter. Colours are fixed ones readable on the light and the dark background; the axes
 * take the page's text colour.
 */
import type { StatsBucket } from '@mailyard/contracts';
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export const CHART_SERIES = [
  { key: 'delivered', label: 'Delivered', color: '#2e9d5b' },
  { key: 'bounced', label: 'Bounced', color: '#d9534f' },
  { key: 'opened', label: 'Opened', color: '#3b82f6' },
  { key: 'clicked', label: 'Clicked', color: '#a855f7' },
  { key: 'spam', label: 'Spam', color: '#e0a100' },
] as const;

export function StatsChart({ buckets }: { buckets: StatsBucket[] }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current!;
    const text = getComputedStyle(el).color;
    const grid = 'rgba(128,128,128,0.25)';
    const axis = { stroke: text, grid: { stroke: grid }, ticks: { stroke: grid } };
    // One tick per day (or per week when days are crowded), labelled as a date: the data is per day.
    const dayAxis = {
      ...axis,
      space: 48,
      incrs: [86_400, 7 * 86_400],
      values: (_u: uPlot, splits: number[]) =>
        splits.map((s) =>
          new Date(s * 1000).toLocaleDateString(undefined, {
            month: 'short',
            day: 'numeric',
            timeZone: 'UTC',
          }),
        ),
    };
    const data: uPlot.AlignedData = [
      buckets.map((b) => Date.parse(b.start) / 1000),
      ...CHART_SERIES.map((s) => buckets.map((b) => b[s.key])),
    ];
    const plot = new uPlot(
      {
        width: Math.max(320, el.clientWidth),
        height: 280,
        series: [{}, ...CHART_SERIES.map((s) => ({ label: s.label, stroke: s.color, width: 2 }))],
        axes: [dayAxis, axis],
        scales: { x: { time: true } },
      },
      data,
      el,
    );
    const resize = () => plot.setSize({ width: Math.max(320, el.clientWidth), height: 280 });
    window.addEventListener('resize', resize);
    return () => {
      window.removeEventListener('resize', resize);
      plot.destroy();
    };
  }, [buckets]);
  return (
    <div
      class="chart"
      ref={box}
      role="img"
      aria-label="Per-day counts of delivered, bounced, opened, clicked and spam"
    />
  );
}
