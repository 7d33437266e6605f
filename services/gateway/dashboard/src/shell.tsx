/** The signed-in frame: skip link, navigation (one link per page, by name), Sign out, the page. */
import type { Mailyard } from '@mailyard/client/browser';
import { useEffect, useRef } from 'preact/hooks';
import { Audit } from './pages/audit';
import { Backfill } from './pages/backfill';
import { Domains } from './pages/domains';
import { Inbound } from './pages/inbound';
import { Keys } from './pages/keys';
import { Mailers } from './pages/mailers';
import { Message } from './pages/message';
import { Messages } from './pages/messages';
import { Overview } from './pages/overview';
import { Suppressions } from './pages/suppressions';
import { Webhooks } from './pages/webhooks';
import { BASE, usePath } from './router';

export interface PageProps {
  api: Mailyard;
  /** The rest of the path after the page's own segment (e.g. a ref_id). */
  rest: string;
}

const PAGES: Array<{ name: string; path: string; view: (p: PageProps) => preact.JSX.Element }> = [
  { name: 'Overview', path: '/', view: Overview },
  { name: 'Messages', path: '/messages', view: Messages },
  { name: 'Webhooks', path: '/webhooks', view: Webhooks },
  { name: 'Suppressions', path: '/suppressions', view: Suppressions },
  { name: 'Domains', path: '/domains', view: Domains },
  { name: 'Mailers', path: '/mailers', view: Mailers },
  { name: 'Inbound', path: '/inbound', view: Inbound },
  { name: 'Backfill', path: '/backfill', view: Backfill },
  { name: 'Keys', path: '/keys', view: Keys },
  { name: 'Audit', path: '/audit', view: Audit },
];

function pageOf(path: string) {
  if (path.startsWith('/messages/'))
    return { page: PAGES[1]!, view: Message, rest: decodeURIComponent(path.slice(10)) };
  const page =
    PAGES.find((p) => p.path === path) ?? PAGES.find((p) => p.path !== '/' && path.startsWith(`${p.path}/`));
  return page ? { page, view: page.view, rest: '' } : undefined;
}

export function Shell({ api, onSignOut }: { api: Mailyard; onSignOut: () => void }) {
  const path = usePath();
  const found = pageOf(path);
  const main = useRef<HTMLElement>(null);
  useEffect(() => {
    document.title = `${found ? found.page.name : 'Not found'} · Mailyard`;
  }, [found]);
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header>
        <strong class="brand">Mailyard</strong>
        <nav aria-label="Main">
          {PAGES.map((p) => (
            <a
              key={p.path}
              href={BASE + (p.path === '/' ? '' : p.path)}
              aria-current={found?.page === p ? 'page' : undefined}
            >
              {p.name}
            </a>
          ))}
          <a href="/docs">API docs</a>
        </nav>
        <button type="button" onClick={onSignOut}>
          Sign out
        </button>
      </header>
      <main id="main" ref={main} tabIndex={-1}>
        {found ? (
          <found.view api={api} rest={found.rest} />
        ) : (
          <p>
            No page here. <a href={BASE}>Go to the Overview</a>.
          </p>
        )}
      </main>
    </>
  );
}
