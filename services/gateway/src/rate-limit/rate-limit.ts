import { ErrorText, type TenantTier } from '@mailyard/contracts';
import {
  HttpError,
  type HttpNext,
  type HttpRequest,
  type HttpResponse,
  type Kv,
  type Logger,
  counter,
} from '@mailyard/platform';
import { tenantOf } from '../auth/api-key-auth';
import { HitBatcher } from './hit-batcher';

export interface RateLimitOptions {
  limits: Record<TenantTier, number>;
  windowMs: number;
}

const failOpenTotal = counter(
  'mailyard_rate_limit_fail_open_total',
  'Requests let through because the kv store failed',
);
const limitedTotal = counter('mailyard_rate_limited_total', 'Requests rejected with 429', ['tier']);

/** The 429 of a used-up budget: the spec's envelope with `message`, Retry-After = seconds to the window's end. */
export function tooManyRequests(message: string, resetAtMs: number): HttpError {
  const retryAfter = Math.max(1, Math.ceil((resetAtMs - Date.now()) / 1000));
  return new HttpError(429, message, { headers: { 'Retry-After': String(retryAfter) } });
}

/** A kv failure lets the request through (fail open): counted, and warned about at most every 10 s. */
export function failOpenWarner(logger: Logger): (err: unknown) => void {
  let lastWarn = 0;
  return (err) => {
    failOpenTotal.inc();
    if (Date.now() - lastWarn > 10_000) {
      lastWarn = Date.now();
      logger.warn('rate limit store unavailable, failing open', { error: (err as Error).message });
    }
  };
}

/**
 * Per-tenant fixed-window budget counted atomically in the kv store, so every gateway
 * replica shares one budget. If the store fails the request goes through (fail open).
 * Concurrent requests of a tenant are counted with one kv call per event-loop turn (HitBatcher).
 */
export function rateLimit(kv: Kv, logger: Logger, opts: RateLimitOptions) {
  const failOpen = failOpenWarner(logger);
  const hits = new HitBatcher(kv);
  return async (_req: HttpRequest, res: HttpResponse, next: HttpNext): Promise<void> => {
    const { tenantId, tier } = tenantOf(res);
    const limit = opts.limits[tier];
    let hit: Awaited<ReturnType<Kv['hitWindow']>>;
    try {
      hit = await hits.hit(`ratelimit:${tenantId}`, opts.windowMs);
    } catch (err) {
      failOpen(err);
      return next();
    }
    const resetSeconds = Math.ceil(hit.resetAtMs / 1000);
    res.setHeader('X-RateLimit-Limit', String(limit));
    res.setHeader('X-RateLimit-Remaining', String(Math.max(0, limit - hit.count)));
    res.setHeader('X-RateLimit-Reset', String(resetSeconds));
    if (hit.count > limit) {
      limitedTotal.inc({ tier });
      throw tooManyRequests(ErrorText.rateLimited, hit.resetAtMs);
    }
    next();
  };
}
