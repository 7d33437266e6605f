/** Webhooks: the endpoints, their deliveries (status and attempts) and `Replay`. */
import { useState } from 'preact/hooks';
import { when } from '../format';
import type { PageProps } from '../shell';
import { ActionButton, Badge, DataTable, Empty, Pager, Show, useLoad, usePager } from '../ui';

export function Webhooks({ api }: PageProps) {
  const hooks = useLoad(() => api.webhooks.list(), [api]);
  const [status, setStatus] = useState('');
  const pager = usePager([status]);
  const deliveries = useLoad(
    () =>
      api.webhooks.deliveries.list({
        pageSize: 20,
        pageToken: pager.token,
        ...(status ? { status: status as 'delivered' } : {}),
      }),
    [api, status, pager.token],
  );
  const [replayed, setReplayed] = useState('');
  return (
    <>
      <h1>Webhooks</h1>
      <h2>Endpoints</h2>
      <Show load={hooks}>
        {(h) =>
          h.webhooks.length === 0 ? (
            <Empty>
              No webhook yet. Register one with <code>POST /v1/webhook/register</code> (see the API docs) to
              receive email events; its deliveries will show below.
            </Empty>
          ) : (
            <DataTable columns={['Event', 'URL', 'Active', 'Created']}>
              {h.webhooks.map((w) => (
                <tr key={w.webhook_id}>
                  <td>{w.event}</td>
                  <td>
                    <code>{w.url}</code>
                  </td>
                  <td>{w.active ? 'yes' : 'no'}</td>
                  <td>{when(w.created_at)}</td>
                </tr>
              ))}
            </DataTable>
          )
        }
      </Show>
      <h2>Deliveries</h2>
      <label>
        Status{' '}
        <select value={status} onChange={(e) => setStatus((e.target as HTMLSelectElement).value)}>
          <option value="">any</option>
          <option>pending</option>
          <option>retrying</option>
          <option>delivered</option>
          <option>dropped</option>
        </select>
      </label>
      {replayed && <output class="ok">{replayed}</output>}
      <Show load={deliveries}>
        {(d) =>
          d.data.length === 0 ? (
            <Empty>
              No deliveries{status ? ` with status ${status}` : ''} yet. They appear when events reach a
              registered webhook.
            </Empty>
          ) : (
            <>
              <DataTable columns={['Created', 'Events', 'Status', 'Attempts']} actions>
                {d.data.map((x) => (
                  <tr key={x.delivery_id} data-delivery={x.delivery_id}>
                    <td>
                      {when(x.created_at)}
                      {x.replay_of ? <div class="muted">replay of {x.replay_of}</div> : null}
                    </td>
                    <td>{x.event_types.join(', ')}</td>
                    <td>
                      <Badge value={x.status} />
                      {x.dropped_reason ? <div class="muted">{x.dropped_reason}</div> : null}
                      {x.next_attempt_at ? <div class="muted">next: {when(x.next_attempt_at)}</div> : null}
                    </td>
                    <td>
                      {x.attempts.length === 0
                        ? 'none yet'
                        : x.attempts.map((a) => (
                            <div key={a.attempt}>
                              #{a.attempt} {when(a.at)}: {a.status_code ?? 'no answer'} ({a.latency_ms} ms)
                              {a.error ? ` — ${a.error}` : ''}
                            </div>
                          ))}
                    </td>
                    <td>
                      <ActionButton
                        label="Replay"
                        ariaLabel={`Replay delivery ${x.delivery_id}`}
                        action={async () => {
                          const r = await api.webhooks.deliveries.replay(x.delivery_id);
                          setReplayed(`Replay queued as ${r.delivery_id}.`);
                        }}
                        onDone={deliveries.reload}
                      />
                    </td>
                  </tr>
                ))}
              </DataTable>
              <Pager pager={pager} nextToken={d.nextPageToken} total={d.totalCount} />
            </>
          )
        }
      </Show>
    </>
  );
}
