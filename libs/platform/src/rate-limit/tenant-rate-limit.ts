/**
 * The per-tenant request budget every entry point that takes work from a tenant shares (the
 * gateway's /v1 API and the SMTP submission service): a fixed window of RATE_LIMIT_WINDOW_SECONDS
 * holding RATE_LIMIT_STANDARD or RATE_LIMIT_ENTERPRISE hits by the tenant's tier, counted
 * atomically in the kv store under ONE key per tenant (`ratelimit:<tenant id>`), so an API
 * request and an SMTP message spend the same budget on every replica. Concurrent hits of a
 * tenant go to the kv as one call per event-loop turn (hit-batcher.ts). A kv failure lets the
 * hit through (fail open): counted, and warned about at most every 10 s. Each entry point turns
 * `limited` into its own answer (HTTP 429 + Retry-After, SMTP `451 4.7.1`).
 */
import type { TenantTier } from '@mailyard/contracts';
import { positiveInt } from '../config/fields';
import type { Kv } from '../kv/types';
import type { Logger } from '../logger/logger';
import { counter } from '../metrics/registry';
import { HitBatcher } from './hit-batcher';

/** The budget's variables (docs/configuration.md), spread into each service's settings schema. */
export const RateLimitEnvFields = {
  RATE_LIMIT_STANDARD: positiveInt(100),
  RATE_LIMIT_ENTERPRISE: positiveInt(1000),
  RATE_LIMIT_WINDOW_SECONDS: positiveInt(60),
};

export interface RateLimitOptions {
  limits: Record<TenantTier, number>;
  windowMs: number;
}

/** The options from the parsed variables. */
export function rateLimitOptions(s: {
  RATE_LIMIT_STANDARD: number;
  RATE_LIMIT_ENTERPRISE: number;
  RATE_LIMIT_WINDOW_SECONDS: number;
}): RateLimitOptions {
  return {
    limits: { standard: s.RATE_LIMIT_STANDARD, enterprise: s.RATE_LIMIT_ENTERPRISE },
    windowMs: s.RATE_LIMIT_WINDOW_SECONDS * 1000,
  };
}

/** One hit's outcome; null when the kv failed and the hit was let through. */
export interface TenantHit {
  limited: boolean;
  limit: number;
  remaining: number;
  resetAtMs: number;
}

const failOpenTotal = counter(
  'mailyard_rate_limit_fail_open_total',
  'Requests let through because the kv store failed',
);

/** The kv key of a tenant's budget: the one name every entry point counts under. */
export const tenantRateKey = (tenantId: string): string => `ratelimit:${tenantId}`;

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

export class TenantRateLimiter {
  private readonly hits: HitBatcher;
  private readonly failOpen: (err: unknown) => void;

  constructor(
    kv: Pick<Kv, 'hitWindow'>,
    logger: Logger,
    private readonly opts: RateLimitOptions,
  ) {
    this.hits = new HitBatcher(kv);
    this.failOpen = failOpenWarner(logger);
  }

  /** Counts one hit of the tenant's budget. */
  async hit(tenantId: string, tier: TenantTier): Promise<TenantHit | null> {
    const limit = this.opts.limits[tier];
    try {
      const hit = await this.hits.hit(tenantRateKey(tenantId), this.opts.windowMs);
      return {
        limited: hit.count > limit,
        limit,
        remaining: Math.max(0, limit - hit.count),
        resetAtMs: hit.resetAtMs,
      };
    } catch (err) {
      this.failOpen(err);
      return null;
    }
  }
}
