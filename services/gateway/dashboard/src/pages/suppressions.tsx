/** Suppressions: search, add, remove (GET/POST/DELETE /v1/suppressions). */
import { useState } from 'preact/hooks';
import { when } from '../format';
import type { PageProps } from '../shell';
import { ActionButton, DataTable, Empty, ErrorBox, Pager, Show, useLoad, usePager } from '../ui';

export function Suppressions({ api }: PageProps) {
  const [search, setSearch] = useState('');
  const pager = usePager([search]);
  const list = useLoad(
    () =>
      api.suppressions.list({ pageSize: 25, pageToken: pager.token, ...(search ? { email: search } : {}) }),
    [api, search, pager.token],
  );
  const [adding, setAdding] = useState('');
  const [addError, setAddError] = useState<unknown>();
  const [notice, setNotice] = useState('');
  const add = async (e: Event) => {
    e.preventDefault();
    const emails = adding.split(/[\s,;]+/).filter(Boolean);
    if (!emails.length) return setAddError(new Error('Enter one or more addresses.'));
    setAddError(undefined);
    try {
      const r = await api.suppressions.add(emails);
      setNotice(`${r.added} address${r.added === 1 ? '' : 'es'} added.`);
      setAdding('');
      list.reload();
    } catch (err) {
      setAddError(err);
    }
  };
  return (
    <>
      <h1>Suppressions</h1>
      <p class="muted">
        Addresses that are never sent to: hard bounces, complaints, unsubscribes, and the ones you add.
      </p>
      <form
        class="inline"
        onSubmit={(e) => {
          e.preventDefault();
          setSearch(String(new FormData(e.target as HTMLFormElement).get('q') ?? '').trim());
        }}
      >
        <label>
          Search address <input name="q" type="search" />
        </label>
        <button type="submit">Search</button>
      </form>
      <form class="inline" onSubmit={add}>
        <label>
          Add addresses{' '}
          <input name="add" value={adding} onInput={(e) => setAdding((e.target as HTMLInputElement).value)} />
        </label>
        <button type="submit">Add</button>
      </form>
      <ErrorBox error={addError} />
      {notice && <output class="ok">{notice}</output>}
      <Show load={list}>
        {(p) =>
          p.data.length === 0 ? (
            <Empty>
              {search
                ? `No suppressed address contains “${search}”.`
                : 'The list is empty: every address can be sent to. Add one above to stop sending to it.'}
            </Empty>
          ) : (
            <>
              <DataTable columns={['Address', 'Reason', 'Since']} actions>
                {p.data.map((s) => (
                  <tr key={s.email}>
                    <td>{s.email}</td>
                    <td>{s.reason}</td>
                    <td>{when(s.created_at)}</td>
                    <td>
                      <ActionButton
                        label="Remove"
                        ariaLabel={`Remove ${s.email}`}
                        action={async () => {
                          await api.suppressions.remove(s.email);
                          setNotice(`${s.email} removed: it can be sent to again.`);
                        }}
                        onDone={list.reload}
                      />
                    </td>
                  </tr>
                ))}
              </DataTable>
              <Pager pager={pager} nextToken={p.nextPageToken} total={p.totalCount} />
            </>
          )
        }
      </Show>
    </>
  );
}
