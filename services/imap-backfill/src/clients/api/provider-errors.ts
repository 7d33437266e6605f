/**
 * What the provider API clients (libs/providers) throw, as MailboxError kinds (mailbox-client.ts):
 *
 * - OAuthRevokedError (invalid_grant, consent withdrawn, a deactivated mailer): `auth` with no
 *   deactivation of its own: the token layer already deactivated the mailer with `oauth_revoked`
 *   and wrote MAILER_DEACTIVATED; a second event would be wrong.
 * - ProviderAuthError (a fresh token refused, 403 for the account: scope missing, API disabled):
 *   `auth`; the worker deactivates the mailer with `provider_auth_error`.
 * - ProviderThrottledError (429, 5xx, usage limits, no answer, beyond what the client sat out):
 *   `transient`, with the provider's Retry-After.
 * - OAuthAppRejectedError (the app's client secret refused), OAuthGrantNotFoundError,
 *   ProviderRequestError (the provider refused the request for good), an unsearchable
 *   participant (TypeError from the query builders): `terminal`.
 * Anything else passes through unchanged (the worker retries what it does not know: a database
 * or broker hiccup while a token was read).
 */
import {
  OAuthAppRejectedError,
  OAuthGrantNotFoundError,
  OAuthRevokedError,
  ProviderAuthError,
  ProviderRequestError,
  ProviderThrottledError,
} from '@mailyard/providers';
import { MailboxError } from '../../mailbox/mailbox-client';

export function toMailboxError(err: unknown, source: string): unknown {
  if (err instanceof MailboxError) return err;
  if (err instanceof OAuthRevokedError)
    return new MailboxError(
      'auth',
      `the OAuth grant of the mailer was revoked or has expired; sign in again to reactivate it (${err.message})`,
      { source, deactivation: null },
    );
  if (err instanceof ProviderAuthError) return new MailboxError('auth', err.message, { source });
  if (err instanceof ProviderThrottledError)
    return new MailboxError('transient', err.message, { source, retryAfterMs: err.retryAfterMs });
  if (err instanceof OAuthAppRejectedError)
    return new MailboxError(
      'terminal',
      `the provider refused the OAuth app (client id / client secret): ${err.message}`,
      { source },
    );
  if (
    err instanceof OAuthGrantNotFoundError ||
    err instanceof ProviderRequestError ||
    err instanceof TypeError
  )
    return new MailboxError('terminal', err.message, { source });
  return err;
}

/** A 404 from the provider: the message was deleted between listing and fetching. */
export function isGone(err: unknown): boolean {
  return err instanceof ProviderRequestError && err.status === 404;
}
