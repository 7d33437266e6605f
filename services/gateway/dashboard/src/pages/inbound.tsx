/**
 * Inbound: per verified sending domain, where its incoming mail is posted (GET /v1/inbound/{domain})
 * and which addresses accept mail (GET /v1/inbound/username/{domain}); set the webhook.
 */
import { useState } from 'preact/hooks';
import type { PageProps } from '../shell';
import { Badge, Empty, ErrorBox, Show, useLoad } from '../ui';

function DomainInbound({ api, domain }: PageProps & { domain: string }) {
  const route = useLoad(
    () =>
      api.inbound
        .get(domain)
        .catch((err) => ((err as { status?: number }).status === 404 ? null : Promise.reject(err))),
    [api, domain],
  );
  const users = useLoad(
    () =>
      api.inbound.usernames
        .list(domain)
        .catch((err) =>
          (err as { status?: number }).status === 404
            ? { success: true as const, emails: [] }
            : Promise.reject(err),
        ),
    [api, domain],
  );
  const [url, setUrl] = useState('');
  const [error, setError] = useState<unknown>();
  const save = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    try {
      await api.inbound.relayWebhook({ domain, url: url.trim(), method: 'POST' });
      route.reload();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <section class="card">
      <h2>{domain}</h2>
      <Show load={route}>
        {(r) =>
          r ? (
            <p>
              Mail to this domain is posted ({r.method}) to <code>{r.url}</code>
              {r.wildcard ? ' for every address' : ' for the addresses below'}.
            </p>
          ) : (
            <Empty>Incoming mail is not routed yet: set a webhook URL below.</Empty>
          )
        }
      </Show>
      <form class="inline" onSubmit={save}>
        <label>
          Webhook URL{' '}
          <input type="url" value={url} onInput={(e) => setUrl((e.target as HTMLInputElement).value)} />
        </label>
        <button type="submit">Save</button>
      </form>
      <ErrorBox error={error} />
      <Show load={users}>
        {(u) =>
          u.emails.length === 0 ? (
            <p class="muted">No address yet: add one with POST /v1/inbound/username.</p>
          ) : (
            <ul>
              {u.emails.map((x) => (
                <li key={x.username}>
                  {x.username}@{domain} <Badge value={x.active ? 'active' : 'inactive'} />
                </li>
              ))}
            </ul>
          )
        }
      </Show>
    </section>
  );
}

export function Inbound({ api, rest }: PageProps) {
  const domains = useLoad(() => api.domains.list({ pageSize: 50 }), [api]);
  return (
    <>
      <h1>Inbound</h1>
      <Show load={domains}>
        {(p) => {
          const verified = p.data.filter((d) => d.verified);
          return verified.length === 0 ? (
            <Empty>
              Inbound mail needs a verified sending domain: add and verify one under Domains first.
            </Empty>
          ) : (
            <>
              {verified.map((d) => (
                <DomainInbound key={d.domain} api={api} rest={rest} domain={d.domain} />
              ))}
            </>
          );
        }}
      </Show>
    </>
  );
}
