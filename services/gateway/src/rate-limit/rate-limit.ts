import { ErrorText } from '@mailyard/contracts';
import {
  HttpError,
  type HttpNext,
  type HttpRequest,
  type HttpResponse,
  type Kv,
  type Logger,
  type RateLimitOptions,
  TenantRateLimiter,
  counter,
} from '@mailyard/platform';
import { tenantOf } from '../auth/api-key-auth';

export { failOpenWarner } from '@mailyard/platform';

const limitedTotal = counter('mailyard_rate_limited_total', 'Requests rejected with 429', ['tier']);

/** The 429 of a used-up budget: the spec's envelope with `message`, Retry-After = seconds to the window's end. */
export function tooManyRequests(message: string, resetAtMs: number): HttpError {
  const retryAfter = Math.max(1, Math.ceil((resetAtMs - Date.now()) / 1000));
  return new HttpError(429, message, { headers: { 'Retry-After': String(retryAfter) } });
}

/**
 * The per-tenant budget of /v1 requests: the shared limiter (libs/platform rate-limit/
 * tenant-rate-limit.ts, one kv key per tenant, also spent by SMTP submission), answered with the
 * X-RateLimit-* headers and a 429 past it. If the store fails the request goes through (fail open).
 */
export function rateLimit(kv: Kv, logger: Logger, opts: RateLimitOptions) {
  const limiter = new TenantRateLimiter(kv, logger, opts);
  return async (_req: HttpRequest, res: HttpResponse, next: HttpNext): Promise<void> => {
    const { tenantId, tier } = tenantOf(res);
    const hit = await limiter.hit(tenantId, tier);
    if (!hit) return next();
    res.setHeader('X-RateLimit-Limit', String(hit.limit));
    res.setHeader('X-RateLimit-Remaining', String(hit.remaining));
    res.setHeader('X-RateLimit-Reset', String(Math.ceil(hit.resetAtMs / 1000)));
    if (hit.limited) {
      limitedTotal.inc({ tier });
      throw tooManyRequests(ErrorText.rateLimited, hit.resetAtMs);
    }
    next();
  };
}
