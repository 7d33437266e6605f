/**
 * Stored custom headers of a webhook (tenant webhook, inbound route, IMAP mailer's incoming
 * webhook) often hold a credential: they follow a URL change only within the same origin. A new
 * scheme, host or port without `headers` given again is a 400 (docs/architecture.md, security 7, the rule
 * mailer passwords follow: libs/contracts credential-destination.ts). Checked before the new URL
 * is probed, so nothing is sent to the new host either.
 */
import { WebhookHeaderText, credentialNeededAgain, webhookDestination } from '@mailyard/contracts';
import { badRequest } from '@mailyard/platform';
import { type UrlCheckOptions, checkWebhookUrl, parseWebhookUrl } from './url-check';

export interface HeadersDestinationChange {
  /** The URL stored now, and the one the update gives (undefined: the URL does not change). */
  storedUrl: string;
  nextUrl: string | undefined;
  /** Headers are stored (at least one). */
  storedHeaders: boolean;
  /** The update gives `headers` (an empty object too: it clears them). */
  headersGiven: boolean;
  /** The request's field names, for the message: `headers` / `webhook_url`, `webhook.headers` / `webhook.url`. */
  field: string;
  urlField: string;
}

/** Throws the 400 when the update would send stored headers to a new origin without giving them again. */
export function assertHeadersFollowUrl(c: HeadersDestinationChange): void {
  if (c.nextUrl === undefined) return;
  const again = credentialNeededAgain({
    before: webhookDestination(c.storedUrl),
    after: webhookDestination(c.nextUrl),
    stored: c.storedHeaders,
    given: c.headersGiven,
  });
  if (again) throw badRequest(WebhookHeaderText.neededAgain(c.field, c.urlField));
}

/**
 * The URL of an update of a tenant webhook or inbound route, checked in order: a URL that is not
 * one (400), stored headers that would go to a new origin (400), then the reachability probe
 * (url-check.ts, 422). Returns the normalized URL, or undefined when the update gives none.
 */
export async function checkUrlUpdate(
  stored: { url: string; headers: boolean },
  update: { url: string | undefined; headers: boolean },
  names: { field: string; urlField: string },
  urlCheck: UrlCheckOptions,
): Promise<string | undefined> {
  if (update.url === undefined) return undefined;
  parseWebhookUrl(update.url, urlCheck.allowInsecure);
  assertHeadersFollowUrl({
    storedUrl: stored.url,
    nextUrl: update.url,
    storedHeaders: stored.headers,
    headersGiven: update.headers,
    ...names,
  });
  return checkWebhookUrl(update.url, urlCheck);
}
