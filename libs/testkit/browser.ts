/**
 * A real browser for the dashboard test (test/dashboard.test.ts) and benchmark (bench/dashboard): Debian's Chromium (/usr/bin/chromium,
 * installed by scripts/ensure-services.sh) driven by playwright-core (its own browser download
 * is never used). `watch` records what a page must never do: console errors, page errors, and
 * requests to anything but 127.0.0.1 (those are aborted as well as recorded).
 */
import { existsSync } from 'node:fs';
import { type Browser, type BrowserContext, type Page, chromium } from 'playwright-core';

export type { Browser, BrowserContext, Page };

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(`no Chromium at ${CHROMIUM}: run scripts/ensure-services.sh (apt chromium)`);
  // --no-sandbox: the tests may run as root in a container, where Chromium's sandbox cannot start.
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
}

export interface Watched {
  consoleErrors: string[];
  pageErrors: string[];
  foreignRequests: string[];
}

/** Aborts and records every request of `context` to a host other than 127.0.0.1. */
export async function watch(context: BrowserContext, page: Page): Promise<Watched> {
  const w: Watched = { consoleErrors: [], pageErrors: [], foreignRequests: [] };
  await context.route('**/*', (route) => {
    const url = new URL(route.request().url());
    const local = url.hostname === '127.0.0.1' || url.protocol === 'data:' || url.protocol === 'blob:';
    if (local) return route.continue();
    w.foreignRequests.push(route.request().url());
    return route.abort();
  });
  page.on('console', (m) => {
    if (m.type() === 'error') w.consoleErrors.push(`${m.text()} (${m.location().url})`);
  });
  page.on('pageerror', (e) => w.pageErrors.push(String(e)));
  return w;
}
