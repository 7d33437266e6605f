/**
 * A domain card's deliverability (docs/dashboard.md "Pages", docs/deliverability.md): its
 * reputation (rates against the pause thresholds; a pause shown as an alert with its message and
 * `Resume sending`), the DMARC aggregate reports and the TLS-RPT reports of the last 30 days.
 * Three GETs per domain (reputation, dmarc, tls-reports) through @mailyard/client, made only while
 * the card's <details> is open: the Domains page opens the first few cards (they load in
 * parallel) and leaves the rest closed, so a long domain list costs no requests until opened.
 */
import type { Mailyard } from '@mailyard/client';
import type { DmarcSummary, DomainReputation, TlsReportsSummary } from '@mailyard/contracts';
import { useState } from 'preact/hooks';
import { count } from '../format';
import { ActionButton, DataTable, Empty, Pairs, Show, useLoad } from '../ui';

/** Sources shown of the (at most 1,000) the API answers, largest first. */
export const DMARC_SOURCES_SHOWN = 10;

/** `0.062` -> `6.2%`; two decimals below 1 % (as the pause message writes rates). */
export function pct(rate: number): string {
  const p = rate * 100;
  return `${p >= 1 || p === 0 ? p.toFixed(1) : p.toFixed(2)}%`;
}

/** `part` of `whole` as a percentage; `—` when there is nothing to divide. */
const share = (part: number, whole: number) => (whole > 0 ? pct(part / whole) : '—');

function Reputation({ api, domain }: { api: Mailyard; domain: string }) {
  const rep = useLoad(() => api.reputation.get(domain).then((r) => r.data), [api, domain]);
  return (
    <>
      <h3>Reputation</h3>
      <Show load={rep}>
        {(r: DomainReputation) => (
          <>
            {r.paused ? (
              <div class="paused">
                <p role="alert">
                  <strong>{r.paused.message}</strong>
                </p>
                <ActionButton
                  label="Resume sending"
                  ariaLabel={`Resume sending for ${domain}`}
                  action={() => api.reputation.resume(domain)}
                  onDone={rep.reload}
                />
              </div>
            ) : null}
            <Pairs
              kind="totals"
              rows={[
                ['Sent in window', `${count(r.sent)} of ${count(r.window)}`],
                [
                  `Invalid-recipient bounces (pause above ${pct(r.thresholds.bounce_rate)})`,
                  pct(r.bounce_rate),
                ],
                [`Complaints (pause above ${pct(r.thresholds.complaint_rate)})`, pct(r.complaint_rate)],
              ]}
            />
            <p class="muted">
              Sending pauses only with at least {count(r.thresholds.min_volume)} emails in the window.
            </p>
          </>
        )}
      </Show>
    </>
  );
}

function Dmarc({ api, domain }: { api: Mailyard; domain: string }) {
  const dmarc = useLoad(() => api.domains.dmarc(domain).then((r) => r.data), [api, domain]);
  return (
    <>
      <h3>DMARC (last 30 days)</h3>
      <Show load={dmarc}>
        {(d: DmarcSummary) =>
          d.reports === 0 ? (
            <Empty>
              No DMARC reports yet. Publish the _dmarc record above; reports arrive daily from the mailbox
              providers.
            </Empty>
          ) : (
            <>
              <Pairs
                kind="totals"
                rows={[
                  ['Reports', count(d.reports)],
                  ['Messages', count(d.messages)],
                  ['DMARC pass', share(d.dmarc_pass, d.messages)],
                  ['DKIM aligned', share(d.dkim_aligned_pass, d.messages)],
                  ['SPF aligned', share(d.spf_aligned_pass, d.messages)],
                ]}
              />
              <DataTable
                caption={`Top sources of ${domain}`}
                columns={['Source IP', 'Messages', 'Disposition', 'DKIM', 'SPF', 'Reporter']}
              >
                {d.sources.slice(0, DMARC_SOURCES_SHOWN).map((s) => (
                  <tr
                    key={`${s.source_ip} ${s.disposition} ${s.dkim} ${s.spf} ${s.header_from} ${s.reporter}`}
                  >
                    <td>
                      <code>{s.source_ip}</code>
                    </td>
                    <td>{count(s.count)}</td>
                    <td>{s.disposition}</td>
                    <td>{s.dkim}</td>
                    <td>{s.spf}</td>
                    <td>{s.reporter}</td>
                  </tr>
                ))}
              </DataTable>
            </>
          )
        }
      </Show>
    </>
  );
}

function Tls({ api, domain }: { api: Mailyard; domain: string }) {
  const tls = useLoad(() => api.domains.tlsReports(domain).then((r) => r.data), [api, domain]);
  return (
    <>
      <h3>TLS reports (last 30 days)</h3>
      <Show load={tls}>
        {(t: TlsReportsSummary) => {
          if (t.reports === 0)
            return (
              <Empty>
                No TLS reports yet. Publish <code>_smtp._tls.{domain}</code> TXT{' '}
                <code>v=TLSRPTv1; rua=mailto:tls-rpt@</code> and this service's domain (see the DMARC record
                above); reports arrive daily from the mailbox providers that send them.
              </Empty>
            );
          const days = t.days.filter((d) => d.reports > 0);
          const types = new Map<string, number>();
          for (const d of days)
            for (const [k, n] of Object.entries(d.failure_types)) types.set(k, (types.get(k) ?? 0) + n);
          const successful = days.reduce((a, d) => a + d.successful, 0);
          const failed = days.reduce((a, d) => a + d.failed, 0);
          return (
            <>
              <Pairs
                kind="totals"
                rows={[
                  ['Reports', count(t.reports)],
                  ['Successful sessions', count(successful)],
                  ['Failed sessions', count(failed)],
                ]}
              />
              {types.size ? (
                <p>
                  Failures:{' '}
                  {[...types]
                    .sort((a, b) => b[1] - a[1])
                    .map(([k, n]) => `${k} ${count(n)}`)
                    .join(', ')}
                </p>
              ) : null}
            </>
          );
        }}
      </Show>
    </>
  );
}

/** The card's collapsible deliverability section; its three blocks load when it is open. */
export function Deliverability({ api, domain, open }: { api: Mailyard; domain: string; open: boolean }) {
  const [isOpen, setOpen] = useState(open);
  return (
    <details
      class="deliverability"
      open={open}
      onToggle={(e) => setOpen((e.currentTarget as HTMLDetailsElement).open)}
    >
      <summary>Deliverability</summary>
      {isOpen ? (
        <>
          <Reputation api={api} domain={domain} />
          <Dmarc api={api} domain={domain} />
          <Tls api={api} domain={domain} />
        </>
      ) : null}
    </details>
  );
}
