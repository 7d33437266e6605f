/**
 * How the API clients ask for a bearer token. It is the seam's AccessTokenSource (oauth/types.ts)
 * with one optional hint: after the provider answered 401 the client asks once more, naming the
 * token it refused, so a source that caches tokens refreshes instead of handing the same one out
 * again. Any AccessTokenSource fits (it ignores the hint; the client then retries once with
 * whatever it gets).
 */
import type { AccessTokenSource } from '../oauth/types';
import type { ThrottleGate } from './throttle-gate';

export interface TokenRequest {
  /** The token the provider just refused (401): do not return it again. */
  rejected?: string;
}

/**
 * `throttle`: the mailer's provider "not before" (throttle-gate.ts), when the source knows its
 * mailer (oauthAccessTokens().forMailer attaches one): the clients honour and record Retry-After
 * through it, across restarts and replicas.
 */
export type TokenSource = (AccessTokenSource | ((request?: TokenRequest) => Promise<string>)) & {
  readonly throttle?: ThrottleGate;
};

export function askToken(source: TokenSource, request?: TokenRequest): Promise<string> {
  return (source as (request?: TokenRequest) => Promise<string>)(request);
}
