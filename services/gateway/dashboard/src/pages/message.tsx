/**
 * A message's page: its log entries (one per recipient) and its timeline of events
 * (GET /v1/email/logs/{refId}/events): SMTP answers and retries, bounce reasons, opens and
 * clicks with device, browser and place.
 */
import type { EmailEvent } from '@mailyard/contracts';
import { when } from '../format';
import { BASE } from '../router';
import type { PageProps } from '../shell';
import { Badge, DataTable, Empty, Pairs, Show, useLoad } from '../ui';

function EventDetails({ e }: { e: EmailEvent }) {
  const d = e.details as EmailEvent['details'] & { bounce_category?: string };
  const t = d.tracking;
  const rows: Array<[string, string]> = [];
  if (d.failed_reason)
    rows.push([e.event === 'MAIL_DELIVERED' ? 'Answer' : 'Reason / SMTP answer', d.failed_reason]);
  if (d.provider_error) rows.push(['Provider error', d.provider_error]);
  if (d.bounce_category) rows.push(['Bounce category', d.bounce_category]);
  if (d.attempt !== undefined)
    rows.push([
      'Attempt',
      `${d.attempt} of ${d.max_attempts ?? '?'}${d.retry_scheduled ? ' (retry scheduled)' : ''}`,
    ]);
  if (d.message_id) rows.push(['Message-ID', d.message_id]);
  if (t.url) rows.push(['Link', t.url]);
  const device = [t.device_type, t.os, [t.browser_name, t.browser_version].filter(Boolean).join(' ')].filter(
    Boolean,
  );
  if (device.length) rows.push(['Device', device.join(' · ') + (t.bot ? ' (bot)' : '')]);
  const place = [t.city, t.region, t.country].filter(Boolean);
  if (place.length || t.ip) rows.push(['Place', [place.join(', '), t.ip].filter(Boolean).join(' · ')]);
  return <Pairs rows={rows} kind="kv" />;
}

export function Message({ api, rest: refId }: PageProps) {
  const logs = useLoad(() => api.logs.list({ refId, pageSize: 50 }), [api, refId]);
  const events = useLoad(() => api.logs.events(refId), [api, refId]);
  return (
    <>
      <p>
        <a href={`${BASE}/messages`}>← Messages</a>
      </p>
      <h1>
        Message <code>{refId}</code>
      </h1>
      <Show load={logs}>
        {(l) =>
          l.data.length === 0 ? null : (
            <>
              <p>
                <strong>Subject:</strong> {l.data[0]!.subject}
              </p>
              <DataTable columns={['Recipient', 'Status', 'Delivered', 'Message-ID']}>
                {l.data.map((m) => (
                  <tr key={m.recipient + m.recipient_type}>
                    <td>
                      {m.recipient} ({m.recipient_type})
                    </td>
                    <td>
                      <Badge value={m.status} />
                    </td>
                    <td>{when(m.delivered_at)}</td>
                    <td>
                      <code>{m.message_id}</code>
                    </td>
                  </tr>
                ))}
              </DataTable>
            </>
          )
        }
      </Show>
      <h2>Timeline</h2>
      <Show load={events}>
        {(ev) =>
          ev.data.length === 0 ? (
            <Empty>No event yet: the message is queued. Reload in a moment to see its delivery.</Empty>
          ) : (
            <ol class="timeline">
              {ev.data.map((e, i) => (
                <li key={`${e.event}-${e.details.event_at}-${i}`}>
                  <Badge value={e.event} />{' '}
                  <time dateTime={e.details.event_at}>{when(e.details.event_at)}</time>{' '}
                  <span class="muted">{e.details.email.join(', ')}</span>
                  <EventDetails e={e} />
                </li>
              ))}
              {ev.truncated ? <li class="muted">Only the first 1000 events are shown.</li> : null}
            </ol>
          )
        }
      </Show>
    </>
  );
}
