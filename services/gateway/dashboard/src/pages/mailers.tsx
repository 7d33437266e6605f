/** Mailers: every mailer with its state; enable or disable (POST /v1/mailer/{id}/enable|disable). */
import { when } from '../format';
import type { PageProps } from '../shell';
import { ActionButton, Badge, DataTable, Empty, Show, useLoad } from '../ui';

export function Mailers({ api }: PageProps) {
  const list = useLoad(() => api.mailers.list({ pageSize: 50 }), [api]);
  return (
    <>
      <h1>Mailers</h1>
      <Show load={list}>
        {(p) =>
          p.data.length === 0 ? (
            <Empty>
              No mailer yet. Add a sending domain (Domains) or an SMTP, IMAP or SparkPost mailer through the
              API.
            </Empty>
          ) : (
            <DataTable columns={['Name', 'Type', 'Address', 'State', 'Created']} actions>
              {p.data.map((m) => (
                <tr key={m.mailer_id}>
                  <td>
                    {m.name}
                    <div class="muted">
                      <code>{m.mailer_id}</code>
                    </div>
                  </td>
                  <td>{m.config_type}</td>
                  <td>{m.email}</td>
                  <td>
                    <Badge value={m.state} />
                    {m.state_reason ? <div class="muted">{m.state_reason}</div> : null}
                  </td>
                  <td>{when(m.created_at)}</td>
                  <td>
                    {m.state === 'active' ? (
                      <ActionButton
                        label="Disable"
                        ariaLabel={`Disable ${m.name}`}
                        action={() => api.mailers.disable(m.mailer_id)}
                        onDone={list.reload}
                      />
                    ) : (
                      <ActionButton
                        label="Enable"
                        ariaLabel={`Enable ${m.name}`}
                        action={() => api.mailers.enable(m.mailer_id)}
                        onDone={list.reload}
                      />
                    )}
                  </td>
                </tr>
              ))}
            </DataTable>
          )
        }
      </Show>
    </>
  );
}
