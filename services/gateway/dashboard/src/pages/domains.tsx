/**
 * Domains: the sending domains, their DNS records to publish (copy buttons), status, `Verify`, add,
 * and each one's deliverability (reputation and pause, DMARC and TLS reports): open, and so
 * loaded at once, for the first DELIVERABILITY_OPEN cards; the others load when opened.
 */
import type { Mailyard } from '@mailyard/client';
import type { DomainData } from '@mailyard/contracts';
import { useState } from 'preact/hooks';
import { when } from '../format';
import type { PageProps } from '../shell';
import { ActionButton, Badge, CopyButton, DataTable, Empty, ErrorBox, Show, useLoad } from '../ui';
import { Deliverability } from './domain-deliverability';

/** Cards whose deliverability section starts open (three GETs each, in parallel). */
const DELIVERABILITY_OPEN = 5;

function DomainCard({
  api,
  d,
  open,
  onVerify,
}: { api: Mailyard; d: DomainData; open: boolean; onVerify: () => Promise<unknown> }) {
  return (
    <section class="card" aria-labelledby={`dom-${d.domain}`}>
      <h2 id={`dom-${d.domain}`}>
        {d.unicode_domain} <Badge value={d.verified ? 'verified' : 'not verified'} />{' '}
        <Badge value={d.state} />
      </h2>
      <p class="muted">
        Last checked {when(d.last_checked_at)}
        {d.verified_at ? ` · verified ${when(d.verified_at)}` : ''}
      </p>
      <DataTable caption="Records to publish" columns={['Purpose', 'Type', 'Name', 'Value']}>
        {d.records.map((r) => (
          <tr key={r.purpose + r.name}>
            <td>
              {r.purpose}
              {r.required ? '' : ' (recommended)'}
            </td>
            <td>{r.type}</td>
            <td>
              <code>{r.name}</code> <CopyButton text={r.name} label={`${r.purpose} name`} />
            </td>
            <td>
              <code class="wrap">
                {r.priority !== undefined ? `${r.priority} ` : ''}
                {r.value}
              </code>{' '}
              <CopyButton text={r.value} label={`${r.purpose} value`} />
            </td>
          </tr>
        ))}
      </DataTable>
      <ActionButton label="Verify" ariaLabel={`Verify ${d.domain}`} action={onVerify} />
      <Deliverability api={api} domain={d.domain} open={open} />
    </section>
  );
}

export function Domains({ api }: PageProps) {
  const list = useLoad(() => api.domains.list({ pageSize: 50 }), [api]);
  const [name, setName] = useState('');
  const [error, setError] = useState<unknown>();
  const add = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    try {
      await api.domains.add({ domain: name.trim() });
      setName('');
      list.reload();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <>
      <h1>Domains</h1>
      <form class="inline" onSubmit={add}>
        <label>
          Add a sending domain{' '}
          <input
            value={name}
            onInput={(e) => setName((e.target as HTMLInputElement).value)}
            placeholder="example.com"
          />
        </label>
        <button type="submit">Add</button>
      </form>
      <ErrorBox error={error} />
      <Show load={list}>
        {(p) =>
          p.data.length === 0 ? (
            <Empty>
              No sending domain yet. Add one above, publish the records it shows at your DNS host, then press
              Verify.
            </Empty>
          ) : (
            <>
              {p.data.map((d, i) => (
                <DomainCard
                  key={d.domain}
                  api={api}
                  d={d}
                  open={i < DELIVERABILITY_OPEN}
                  onVerify={async () => {
                    await api.domains.verify(d.domain);
                    list.reload();
                  }}
                />
              ))}
            </>
          )
        }
      </Show>
    </>
  );
}
