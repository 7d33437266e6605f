/**
 * What the provider API clients (libs/providers) throw, as MailboxError kinds (mailbox-client.ts).
 * What the error means is decided once in libs/providers (classifyProviderFailure); this maps
 * each kind:
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
 * - ProviderRequestError 404: the message is gone (isGone).
 * Anything else passes through unchanged (the worker retries what it does not know: a database
 * or broker hiccup while a token was read).
 */
import { classifyProviderFailure } from '@mailyard/providers';
import { MailboxError } from '../../mailbox/mailbox-client';

export function toMailboxError(err: unknown, source: string): unknown {
  if (err instanceof MailboxError) return err;
  const failure = classifyProviderFailure(err);
  switch (failure?.kind) {
    case 'grant-revoked':
      return new MailboxError(
        'auth',
        `the OAuth grant of the mailer was revoked or has expired; sign in again to reactivate it (${failure.message})`,
        { source, deactivation: null },
      );
    case 'access-refused':
      return new MailboxError('auth', failure.message, { source });
    case 'throttled':
      return new MailboxError('transient', failure.message, { source, retryAfterMs: failure.retryAfterMs });
    case 'app-rejected':
      return new MailboxError(
        'terminal',
        `the provider refused the OAuth app (client id / client secret): ${failure.message}`,
        { source },
      );
    case 'grant-missing':
    case 'request-refused':
      return new MailboxError('terminal', failure.message, { source });
    default:
      return err instanceof TypeError ? new MailboxError('terminal', err.message, { source }) : err;
  }
}

/** A 404 from the provider: the message was deleted between listing and fetching. */
export function isGone(err: unknown): boolean {
  const failure = classifyProviderFailure(err);
  return failure?.kind === 'request-refused' && failure.status === 404;
}
