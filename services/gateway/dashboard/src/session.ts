/**
 * The signed-in API key: kept in sessionStorage only (this tab; gone when it closes), never in
 * localStorage or a cookie. Every call goes through @mailyard/client with that key as Bearer,
 * against the gateway that served the page (same origin: the CSP's connect-src 'self').
 */
import { Mailyard } from '@mailyard/client/browser';

const KEY = 'mailyard.apiKey';

export function storedKey(): string | null {
  return sessionStorage.getItem(KEY);
}

export function storeKey(apiKey: string): void {
  sessionStorage.setItem(KEY, apiKey);
}

export function forgetKey(): void {
  sessionStorage.removeItem(KEY);
}

/** A client for `apiKey`; no retries on 429 beyond one, so a page shows a limit quickly. */
export function clientFor(apiKey: string): Mailyard {
  return new Mailyard({ apiKey, basePath: location.origin, retry: { retries: 1 }, timeoutMs: 20_000 });
}
