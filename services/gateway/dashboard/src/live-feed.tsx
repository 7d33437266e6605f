/**
 * Overview's live feed: the account's email events as they happen, from GET /v1/events/stream
 * through the client's `events.stream()` (one connection; reconnects with the last id after a
 * drop, waiting longer each time). The newest 50 are kept on screen.
 */
import type { Mailyard, StreamedEvent } from '@mailyard/client/browser';
import { useEffect, useState } from 'preact/hooks';
import { errorText, when } from './format';
import { BASE } from './router';
import { Badge, Empty } from './ui';

export function LiveFeed({ api }: { api: Mailyard }) {
  const [items, setItems] = useState<StreamedEvent[]>([]);
  const [state, setState] = useState('connecting');
  useEffect(() => {
    const abort = new AbortController();
    let last: string | undefined;
    (async () => {
      for (let failures = 0; !abort.signal.aborted; ) {
        try {
          setState('live');
          for await (const item of api.events.stream({ signal: abort.signal, lastEventId: last })) {
            last = item.id;
            failures = 0;
            setItems((s) => [item, ...s].slice(0, 50));
          }
        } catch (err) {
          if (abort.signal.aborted) return;
          failures++;
          setState(`disconnected: ${errorText(err)}; retrying`);
        }
        await new Promise((r) => setTimeout(r, Math.min(30_000, 1000 * 2 ** failures)));
      }
    })();
    return () => abort.abort();
  }, [api]);
  return (
    <section aria-labelledby="live-h">
      <h2 id="live-h">Live feed</h2>
      <p class="muted" aria-live="polite">
        {state === 'live' ? 'Connected: new events appear here as they happen.' : state}
      </p>
      {items.length === 0 ? (
        <Empty>No events since this page opened. Send an email and watch it arrive here.</Empty>
      ) : (
        <ul class="feed">
          {items.map(({ id, event }) => (
            <li key={id}>
              <Badge value={event.event} /> {event.details.email.join(', ')} ·{' '}
              <a href={`${BASE}/messages/${encodeURIComponent(event.details.ref_id)}`}>
                {event.details.ref_id}
              </a>{' '}
              · {when(event.details.event_at)}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
