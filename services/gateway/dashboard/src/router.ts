/**
 * Path routing under /ui with the History API: links are real <a href> elements (keyboard,
 * middle-click, copy link), a click on one is turned into pushState; the gateway answers
 * index.html for every /ui/* path, so a reload lands on the same page.
 */
import { useEffect, useState } from 'preact/hooks';

export const BASE = '/ui';

export function currentPath(): string {
  const p = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) : '/';
  return p === '' ? '/' : p;
}

export function navigate(path: string): void {
  history.pushState(null, '', BASE + path);
  window.dispatchEvent(new Event('mailyard:navigate'));
}

export function usePath(): string {
  const [path, setPath] = useState(currentPath());
  useEffect(() => {
    const update = () => setPath(currentPath());
    window.addEventListener('popstate', update);
    window.addEventListener('mailyard:navigate', update);
    return () => {
      window.removeEventListener('popstate', update);
      window.removeEventListener('mailyard:navigate', update);
    };
  }, []);
  return path;
}

/** Intercepts plain left clicks on in-app links (modifier clicks open a new tab as usual). */
export function installLinkHandler(): void {
  document.addEventListener('click', (e) => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    const a = (e.target as Element).closest?.('a');
    const href = a?.getAttribute('href');
    if (!a || !href || a.target || (!href.startsWith(`${BASE}/`) && href !== BASE)) return;
    e.preventDefault();
    navigate(href.slice(BASE.length) || '/');
  });
}
