/** Messages: the log search (GET /v1/email/logs) with its filters and pagination. */
import type { LogsParams } from '@mailyard/client/browser';
import { useState } from 'preact/hooks';
import { when } from '../format';
import { BASE } from '../router';
import type { PageProps } from '../shell';
import { Badge, DataTable, Empty, Pager, Show, useLoad, usePager } from '../ui';

const STATUSES = [
  'QUEUED',
  'FAILED',
  'MAIL_DELIVERED',
  'MAIL_OPENED',
  'MAIL_CLICKED',
  'MAIL_BOUNCE',
  'MAIL_UNSUBSCRIBED',
];

type Filters = Pick<
  LogsParams,
  'email' | 'domain' | 'refId' | 'subject' | 'campaignId' | 'startDate' | 'endDate'
> & {
  status?: string;
};

export function Messages({ api }: PageProps) {
  const [filters, setFilters] = useState<Filters>({});
  const pager = usePager([filters]);
  const logs = useLoad(
    () => api.logs.list({ ...(filters as LogsParams), pageSize: 25, pageToken: pager.token }),
    [api, filters, pager.token],
  );
  const submit = (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.target as HTMLFormElement);
    const f: Record<string, string> = {};
    for (const [k, v] of form.entries()) if (typeof v === 'string' && v.trim()) f[k] = v.trim();
    setFilters(f as Filters);
  };
  const field = (name: keyof Filters, label: string, type: 'text' | 'date' = 'text') => (
    // biome-ignore lint/a11y/noLabelWithoutControl: the input is one of the two branches below
    <label>
      {label}
      {type === 'date' ? <input name={name} type="date" /> : <input name={name} type="text" />}
    </label>
  );
  return (
    <>
      <h1>Messages</h1>
      <form class="filters" onSubmit={submit} aria-label="Search the log">
        {field('email', 'Recipient')}
        {field('domain', 'Recipient domain')}
        {field('subject', 'Subject contains')}
        {field('refId', 'ref_id')}
        {field('campaignId', 'Campaign')}
        <label>
          Status
          <select name="status">
            <option value="">any</option>
            {STATUSES.map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
        </label>
        {field('startDate', 'From', 'date')}
        {field('endDate', 'To', 'date')}
        <button type="submit">Search</button>
      </form>
      <Show load={logs}>
        {(page) =>
          page.data.length === 0 ? (
            <Empty>
              {Object.keys(filters).length
                ? 'No message matches these filters. Widen them (clear a field) and search again.'
                : 'No messages yet. Send one with POST /v1/email/send (see the API docs); it is listed here at once.'}
            </Empty>
          ) : (
            <>
              <DataTable columns={['Created', 'Recipient', 'Subject', 'Status', 'Why not delivered']}>
                {page.data.map((m) => (
                  <tr key={`${m.ref_id}/${m.recipient}/${m.recipient_type}`}>
                    <td>{when(m.created_at)}</td>
                    <td>
                      <a href={`${BASE}/messages/${encodeURIComponent(m.ref_id)}`}>{m.recipient}</a>
                      {m.recipient_type !== 'to' ? ` (${m.recipient_type})` : ''}
                    </td>
                    <td>{m.subject}</td>
                    <td>
                      <Badge value={m.status} />
                    </td>
                    <td>{m.failure_reason}</td>
                  </tr>
                ))}
              </DataTable>
              <Pager pager={pager} nextToken={page.nextPageToken} total={page.totalCount} />
            </>
          )
        }
      </Show>
    </>
  );
}
