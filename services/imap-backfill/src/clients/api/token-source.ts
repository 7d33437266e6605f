/**
 * The bearer tokens of one OAuth mailer for its API client: the token lifecycle's source
 * (libs/providers oauthAccessTokens: refresh ahead of expiry, one refresh per mailer, revocation
 * -> deactivation) with the API clients' hint bridged: after a 401 the client asks again naming
 * the refused token (api/token.ts); if that is the token this source handed out last, the stored
 * token is marked expired (`invalidate`) and the next one is a fresh refresh, so a revoked grant
 * is found at once. Concurrent requests refused with the same token share one refresh; a request
 * that names an older token gets the current one. The source's `throttle` (the mailer's recorded
 * Retry-After) is kept, so the clients honour it.
 *
 * A token handed out is handed out again for `reuseMs` (10 s) without asking the lifecycle: each
 * ask reads and unseals the stored grant (a database query), and a backfill makes two API
 * requests per message. Safe because the lifecycle only hands out tokens valid for at least
 * OAUTH_REFRESH_AHEAD_S more, and a token the provider refuses (revoked grant) is never reused:
 * the 401 names it and the next ask goes to the lifecycle (invalidate and refresh). A mailer
 * deactivated meanwhile by someone else is noticed at the next ask, within `reuseMs`.
 */
import type { OAuthAccessTokens, TokenRequest } from '@mailyard/providers';

export interface TokenReuse {
  /** How long a token handed out is handed out again without asking (default 10 s; 0: never). */
  reuseMs?: number;
  now?: () => number;
}

export function mailerTokenSource(
  tokens: OAuthAccessTokens,
  tenantId: string,
  mailerId: string,
  reuse: TokenReuse = {},
) {
  const source = tokens.forMailer(tenantId, mailerId);
  const reuseMs = reuse.reuseMs ?? 10_000;
  const now = reuse.now ?? Date.now;
  let last: string | null = null;
  let lastAt = 0;
  let renewing: Promise<string> | null = null;
  let asking: Promise<string> | null = null;
  const take = (p: Promise<string>) =>
    p.then((token) => {
      last = token;
      lastAt = now();
      return token;
    });
  const bridged = (request?: TokenRequest): Promise<string> => {
    if (renewing) return renewing;
    if (request?.rejected !== undefined && request.rejected === last) {
      last = null;
      renewing = take(tokens.invalidate(tenantId, mailerId).then(() => source())).finally(() => {
        renewing = null;
      });
      return renewing;
    }
    if (last !== null && now() - lastAt < reuseMs) return Promise.resolve(last);
    // Concurrent askers share one ask.
    asking ??= take(source()).finally(() => {
      asking = null;
    });
    return asking;
  };
  // The mailer's recorded Retry-After travels with it (libs/providers api/throttle-gate.ts).
  return source.throttle ? Object.assign(bridged, { throttle: source.throttle }) : bridged;
}
