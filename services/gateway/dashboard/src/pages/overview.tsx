/** Overview: per-day chart of the last 7 or 30 days (GET /v1/stats), totals, live feed. */
import { useState } from 'preact/hooks';
import { CHART_SERIES, StatsChart } from '../chart';
import { count } from '../format';
import { LiveFeed } from '../live-feed';
import { BASE } from '../router';
import type { PageProps } from '../shell';
import { Empty, Pairs, Show, useLoad } from '../ui';

const day = (d: Date) => d.toISOString().slice(0, 10);

export function Overview({ api }: PageProps) {
  const [days, setDays] = useState(7);
  const stats = useLoad(() => {
    const end = new Date();
    const start = new Date(end.getTime() - (days - 1) * 86_400_000);
    return api.stats.get({ startDate: day(start), endDate: day(end), granularity: 'day' });
  }, [api, days]);
  return (
    <>
      <h1>Overview</h1>
      <fieldset class="toolbar">
        <legend class="sr-only">Range</legend>
        {[7, 30].map((d) => (
          <button key={d} type="button" aria-pressed={days === d} onClick={() => setDays(d)}>
            Last {d} days
          </button>
        ))}
      </fieldset>
      <Show load={stats}>
        {(s) => (
          <>
            <Pairs
              kind="totals"
              rows={[{ key: 'requested', label: 'Sent' } as const, ...CHART_SERIES].map((c) => [
                c.label,
                count(s.totals[c.key]),
              ])}
            />
            {s.totals.requested === 0 && s.totals.delivered === 0 ? (
              <Empty>
                Nothing sent in the last {days} days. Send your first email with{' '}
                <code>POST /v1/email/send</code> (see <a href="/docs">the API docs</a>), then come back: it
                shows up here and in <a href={`${BASE}/messages`}>Messages</a>.
              </Empty>
            ) : null}
            <StatsChart buckets={s.data} />
          </>
        )}
      </Show>
      <LiveFeed api={api} />
    </>
  );
}
