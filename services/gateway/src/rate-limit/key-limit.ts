/**
 * A budget per key rather than per tenant (e.g. replays of one webhook delivery): at most `limit`
 * hits per fixed window of `windowMs`, counted atomically in the kv store like the tenant rate
 * limit (rate-limit.ts), so every gateway replica shares one count. Past it: 429 with the spec's
 * envelope, `message` and Retry-After. A failing kv store lets the hit through (fail open, as the
 * tenant rate limit does). Hit only for requests that would do the work: refusals before it cost
 * nothing.
 */
import type { Kv, Logger } from '@mailyard/platform';
import { failOpenWarner, tooManyRequests } from './rate-limit';

export interface KeyLimitOptions {
  limit: number;
  windowMs: number;
  /** The 429's error text. */
  message: string;
}

/** Returns `hit(key)`: counts one hit of `key`, throws the 429 past the limit. */
export function keyLimit(kv: Pick<Kv, 'hitWindow'>, logger: Logger, opts: KeyLimitOptions) {
  const failOpen = failOpenWarner(logger);
  return async (key: string): Promise<void> => {
    let hit: Awaited<ReturnType<Kv['hitWindow']>>;
    try {
      hit = await kv.hitWindow(key, opts.windowMs);
    } catch (err) {
      failOpen(err);
      return;
    }
    if (hit.count > opts.limit) throw tooManyRequests(opts.message, hit.resetAtMs);
  };
}
