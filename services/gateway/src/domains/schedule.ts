import type { CheckSchedule } from '@mailyard/store';
import type { GatewayConfig } from '../settings';

/** Background re-check timing (DOMAIN_CHECK_* settings), in milliseconds. */
export interface CheckTiming {
  firstDelayMs: number;
  maxBackoffMs: number;
  unverifiedWindowMs: number;
  verifiedIntervalMs: number;
}

export function checkTiming(config: GatewayConfig): CheckTiming {
  return {
    firstDelayMs: config.DOMAIN_CHECK_FIRST_DELAY_S * 1000,
    maxBackoffMs: config.DOMAIN_CHECK_MAX_BACKOFF_S * 1000,
    unverifiedWindowMs: config.DOMAIN_CHECK_UNVERIFIED_WINDOW_S * 1000,
    verifiedIntervalMs: config.DOMAIN_CHECK_VERIFIED_INTERVAL_S * 1000,
  };
}

/** A new domain: first automatic check after the first delay. */
export function firstCheck(createdAt: Date, t: CheckTiming): CheckSchedule {
  return { nextCheckAt: new Date(createdAt.getTime() + t.firstDelayMs), unverifiedSince: createdAt };
}

/**
 * After a check at `now`: a verified domain is checked again after the verified interval. An
 * unverified one is re-checked with back-off (the delay grows with the time it has been
 * unverified, from the first delay up to the maximum back-off) until the unverified window
 * since it became unverified (creation, or losing its records) has passed; then no more
 * automatic checks. An explicit verify (`manual`) after the window opens a new one.
 */
export function nextCheck(
  before: { verified: boolean; unverifiedSince: Date | null; createdAt: Date },
  verifiedNow: boolean,
  now: Date,
  t: CheckTiming,
  manual: boolean,
): CheckSchedule {
  if (verifiedNow)
    return { nextCheckAt: new Date(now.getTime() + t.verifiedIntervalMs), unverifiedSince: null };
  let since = before.verified ? now : (before.unverifiedSince ?? before.createdAt);
  if (manual && now.getTime() - since.getTime() >= t.unverifiedWindowMs) since = now;
  const age = now.getTime() - since.getTime();
  const windowEnd = since.getTime() + t.unverifiedWindowMs;
  if (age >= t.unverifiedWindowMs) return { nextCheckAt: null, unverifiedSince: since };
  const delay = Math.min(t.maxBackoffMs, Math.max(t.firstDelayMs, age));
  return { nextCheckAt: new Date(Math.min(now.getTime() + delay, windowEnd)), unverifiedSince: since };
}

/** After an inconclusive background check (DNS gave no answer): keep the state, try again soon. */
export function retryInconclusive(now: Date, t: CheckTiming): Date {
  return new Date(now.getTime() + t.firstDelayMs);
}
