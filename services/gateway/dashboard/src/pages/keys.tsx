/** Keys: the account's API keys; create one (shown once) and revoke (docs/api/keys.md). */
import { useState } from 'preact/hooks';
import { when } from '../format';
import type { PageProps } from '../shell';
import { ActionButton, CopyButton, DataTable, Empty, ErrorBox, Show, useLoad } from '../ui';

export function Keys({ api }: PageProps) {
  const list = useLoad(() => api.keys.list(), [api]);
  const [created, setCreated] = useState<{ api_key: string; key_id: string }>();
  const [error, setError] = useState<unknown>();
  const create = async (e: Event) => {
    e.preventDefault();
    const f = new FormData(e.target as HTMLFormElement);
    setError(undefined);
    try {
      const r = await api.keys.create({
        name: String(f.get('name') ?? ''),
        scope: String(f.get('scope') ?? 'full') as 'full',
      });
      setCreated(r);
      (e.target as HTMLFormElement).reset();
      list.reload();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <>
      <h1>Keys</h1>
      <form class="inline" onSubmit={create}>
        <label>
          Name <input name="name" maxLength={100} />
        </label>
        <label>
          Scope{' '}
          <select name="scope">
            <option value="full">full</option>
            <option value="send">send</option>
            <option value="read">read</option>
          </select>
        </label>
        <button type="submit">Create key</button>
      </form>
      <ErrorBox error={error} />
      {created && (
        <output class="card">
          <p>
            <strong>Copy this key now: it is shown only once.</strong>
          </p>
          <code class="wrap">{created.api_key}</code>{' '}
          <CopyButton text={created.api_key} label="the new key" />{' '}
          <button type="button" onClick={() => setCreated(undefined)}>
            Done
          </button>
        </output>
      )}
      <Show load={list}>
        {(p) =>
          p.data.length === 0 ? (
            <Empty>No key. Create one above.</Empty>
          ) : (
            <DataTable columns={['Name', 'Prefix', 'Scope', 'Created', 'Last used']} actions>
              {p.data.map((k) => (
                <tr key={k.key_id}>
                  <td>{k.name || <span class="muted">unnamed</span>}</td>
                  <td>
                    <code>{k.prefix}…</code>
                  </td>
                  <td>{k.scope}</td>
                  <td>{when(k.created_at)}</td>
                  <td>{when(k.last_used_at)}</td>
                  <td>
                    <ActionButton
                      label="Revoke"
                      ariaLabel={`Revoke key ${k.name || k.prefix}`}
                      action={() => api.keys.delete(k.key_id)}
                      onDone={list.reload}
                    />
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
