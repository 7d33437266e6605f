/**
 * Stored custom headers of a webhook (tenant webhook, inbound route, IMAP mailer's incoming
 * webhook) often hold a credential: they follow a URL change only within the same origin. A new
 * scheme, host or port without `headers` given again is a 400 (DESIGN.md Security 7, the rule
 * mailer passwords follow: libs/contracts credential-destination.ts). Checked before the new URL
 * is probed, so nothing is sent to the new host either.
 */
import { WebhookHeaderText, credentialNeededAgain, webhookDestination } from '@mailyard/contracts';
import { badRequest } from '@mailyard/platform';

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
