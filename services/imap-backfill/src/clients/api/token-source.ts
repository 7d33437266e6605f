/**
 * The bearer tokens of one OAuth mailer for its API client: the token lifecycle's source
 * (libs/providers oauthAccessTokens: refresh ahead of expiry, one refresh per mailer, revocation
 * -> deactivation) with the API clients' hint bridged: after a 401 the client asks again naming
 * the refused token (api/token.ts); if that is the token this source handed out last, the stored
 * token is marked expired (`invalidate`) and the next one is a fresh refresh, so a revoked grant
 * is found at once. Concurrent requests refused with the same token share one refresh; a request
 * that names an older token gets the current one. The source's `throttle` (the mailer's recorded
 * Retry-After) is kept, so the clients honour it.
 */
import type { OAuthAccessTokens, TokenRequest } from '@mailyard/providers';

export function mailerTokenSource(tokens: OAuthAccessTokens, tenantId: string, mailerId: string) {
  const source = tokens.forMailer(tenantId, mailerId);
  let last: string | null = null;
  let renewing: Promise<string> | null = null;
  const take = (p: Promise<string>) =>
    p.then((token) => {
      last = token;
      return token;
    });
  const bridged = (request?: TokenRequest): Promise<string> => {
    if (renewing) return renewing;
    if (request?.rejected !== undefined && request.rejected === last) {
      renewing = take(tokens.invalidate(tenantId, mailerId).then(() => source())).finally(() => {
        renewing = null;
      });
      return renewing;
    }
    return take(source());
  };
  // The mailer's recorded Retry-After travels with it (libs/providers api/throttle-gate.ts).
  return source.throttle ? Object.assign(bridged, { throttle: source.throttle }) : bridged;
}
