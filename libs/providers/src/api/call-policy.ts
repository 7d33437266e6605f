/**
 * The one retry policy of the provider API clients (Gmail API, Microsoft Graph), so both behave
 * the same way:
 *
 * - 401: the token was refused. The token source is asked once more (naming the refused token,
 *   so it refreshes) and the request repeated; a second 401 is a ProviderAuthError.
 * - OAuthRevokedError from the token source (invalid_grant, revoked consent) passes through.
 * - 429, 5xx, a connection failure or a timeout: the provider is busy. The request is repeated
 *   after the provider's Retry-After (or an exponential back-off with jitter when it named none),
 *   at most `maxAttempts` tries in all. A wait longer than `maxWaitMs` is not sat out here: the
 *   caller gets a ProviderThrottledError with `retryAfterMs` at once and retries on its own
 *   schedule (the send service's retry budget, the backfill worker's back-off).
 * - A Retry-After is also recorded for the mailer (the token source's `throttle`,
 *   throttle-gate.ts), and a call for a mailer that is held waits until the hold ends first (or,
 *   when that is longer than `maxWaitMs`, throws ProviderThrottledError at once without calling):
 *   a restarted process or another replica does not call the provider before it allowed.
 * - 403 for the account (not a rate limit): ProviderAuthError, without retrying.
 * - Anything else is the classifier's error (ProviderRequestError, ...), thrown as is.
 *
 * `retryDelay` is the pure decision; `callProvider` runs it.
 */
import { backoffMs, jitteredExact } from '@mailyard/platform';
import { ProviderThrottledError } from '../oauth/types';
import { ProviderAuthError } from './errors';
import type { ThrottleGate } from './throttle-gate';
import { type TokenSource, askToken } from './token';

export interface RetryPolicy {
  /** Tries of one request in all, the first included. */
  maxAttempts: number;
  /** Back-off without Retry-After: baseDelayMs * 2^(try - 1), at most maxDelayMs, with jitter. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** The longest wait sat out in process; a longer one goes back to the caller at once. */
  maxWaitMs: number;
}

export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = Object.freeze({
  maxAttempts: 4,
  baseDelayMs: 500,
  maxDelayMs: 8_000,
  maxWaitMs: 10_000,
});

/** How a provider client classifies what one request threw. */
export type CallFailure =
  | { kind: 'unauthorized'; message: string }
  | { kind: 'busy'; status: number | null; retryAfterMs: number | null; message: string }
  | { kind: 'denied'; status: number; message: string }
  | { kind: 'error'; error: unknown };

/**
 * Milliseconds to wait before try `attempt + 1` after try `attempt` (1-based) found the provider
 * busy; null when the tries are used up or the wait is longer than the policy sits out.
 */
export function retryDelay(
  policy: RetryPolicy,
  attempt: number,
  retryAfterMs: number | null,
  random: () => number = Math.random,
): number | null {
  if (attempt >= policy.maxAttempts) return null;
  const backoff = backoffMs(attempt - 1, {
    minMs: policy.baseDelayMs,
    maxMs: policy.maxDelayMs,
    maxDoublings: policy.maxAttempts,
  });
  const delay = retryAfterMs ?? jitteredExact(backoff, random);
  return delay > policy.maxWaitMs ? null : Math.round(delay);
}

export interface CallOptions<T> {
  /** Names the provider in error messages ("Gmail API", "Microsoft Graph"). */
  provider: string;
  tokens: TokenSource;
  policy: RetryPolicy;
  /** One try of the request with `token` as the bearer. */
  run: (token: string) => Promise<T>;
  classify: (err: unknown) => CallFailure;
  sleep?: (ms: number) => Promise<void>;
  /** The mailer's recorded Retry-After (default: the token source's `throttle`). */
  gate?: ThrottleGate;
  now?: () => number;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Waits out a recorded hold of the mailer, or throws when it is longer than the policy sits out. */
async function honourHold<T>(o: CallOptions<T>, gate: ThrottleGate, now: () => number): Promise<void> {
  const until = await gate.notBefore();
  if (until === null) return;
  const wait = Math.ceil(until - now());
  if (wait <= 0) return;
  if (wait > o.policy.maxWaitMs)
    throw new ProviderThrottledError(
      `${o.provider} 429: the provider asked not to be called before ${new Date(until).toISOString()} (Retry-After recorded for this mailer)`,
      429,
      wait,
    );
  await (o.sleep ?? defaultSleep)(wait);
}

export async function callProvider<T>(o: CallOptions<T>): Promise<T> {
  const sleep = o.sleep ?? defaultSleep;
  const now = o.now ?? Date.now;
  const gate = o.gate ?? o.tokens.throttle;
  if (gate) await honourHold(o, gate, now);
  let token = await askToken(o.tokens);
  let refreshed = false;
  let attempt = 0;
  for (;;) {
    attempt++;
    try {
      return await o.run(token);
    } catch (err) {
      const failure = o.classify(err);
      switch (failure.kind) {
        case 'unauthorized':
          if (refreshed)
            throw new ProviderAuthError(
              `${o.provider} refused a freshly issued access token (401): ${failure.message}`,
              401,
            );
          refreshed = true;
          attempt--; // asking for a new token is not a try against the provider's limits
          token = await askToken(o.tokens, { rejected: token });
          continue;
        case 'busy': {
          if (gate && failure.retryAfterMs !== null) await gate.hold(now() + failure.retryAfterMs);
          const wait = retryDelay(o.policy, attempt, failure.retryAfterMs);
          if (wait === null)
            throw new ProviderThrottledError(
              `${o.provider} ${failure.status ?? 'unreachable'}: ${failure.message}`,
              failure.status,
              failure.retryAfterMs,
            );
          await sleep(wait);
          continue;
        }
        case 'denied':
          throw new ProviderAuthError(
            `${o.provider} denied access (${failure.status}): ${failure.message}`,
            failure.status,
          );
        default:
          throw failure.error;
      }
    }
  }
}

/** Network-level failures (no HTTP answer) that are worth another try. */
const TRANSIENT_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'TimeoutError',
  'AbortError',
]);

/** A 'busy' failure for a request that got no HTTP answer, or null when `code` is not one. */
export function networkFailure(code: unknown, message: string): CallFailure | null {
  if (typeof code !== 'string' || !TRANSIENT_CODES.has(code)) return null;
  return { kind: 'busy', status: null, retryAfterMs: null, message: `${code}: ${message}` };
}
