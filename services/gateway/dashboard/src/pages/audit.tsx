/** Audit: every change made through the API, newest first (GET /v1/audit), by action. */
import { useState } from 'preact/hooks';
import { when } from '../format';
import type { PageProps } from '../shell';
import { DataTable, Empty, Pager, Show, useLoad, usePager } from '../ui';

const ACTIONS = ['create', 'update', 'delete', 'enable', 'disable', 'verify', 'rotate', 'replay', 'cancel'];

export function Audit({ api }: PageProps) {
  const [action, setAction] = useState('');
  const pager = usePager([action]);
  const list = useLoad(
    () =>
      api.audit.list({
        pageSize: 25,
        pageToken: pager.token,
        ...(action ? { action: action as 'create' } : {}),
      }),
    [api, action, pager.token],
  );
  return (
    <>
      <h1>Audit</h1>
      <label>
        Action{' '}
        <select value={action} onChange={(e) => setAction((e.target as HTMLSelectElement).value)}>
          <option value="">any</option>
          {ACTIONS.map((a) => (
            <option key={a}>{a}</option>
          ))}
        </select>
      </label>
      <Show load={list}>
        {(p) =>
          p.data.length === 0 ? (
            <Empty>
              No change recorded{action ? ` with action ${action}` : ''}. Changes made through the API are
              listed here.
            </Empty>
          ) : (
            <>
              <DataTable columns={['When', 'Action', 'Resource', 'Key', 'From']}>
                {p.data.map((a, i) => (
                  <tr key={`${a.at}-${i}`}>
                    <td>{when(a.at)}</td>
                    <td>{a.action}</td>
                    <td>
                      {a.resource} {a.resource_id ? <code>{a.resource_id}</code> : null}
                    </td>
                    <td>
                      <code>{a.key_id ?? '—'}</code>
                    </td>
                    <td>{a.ip ?? '—'}</td>
                  </tr>
                ))}
              </DataTable>
              <Pager pager={pager} nextToken={p.nextPageToken} />
            </>
          )
        }
      </Show>
    </>
  );
}
