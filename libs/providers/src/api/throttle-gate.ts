/**
 * The provider's "not before" for one mailer, kept where a restarted process (or another replica)
 * finds it: when Gmail or Graph answers 429/503 with Retry-After, callProvider (call-policy.ts)
 * records the moment it may call again, and every later call for that mailer, in this process or
 * the next one, waits until then (or hands the wait back to its caller as ProviderThrottledError
 * when it is longer than the policy sits out) instead of hammering the provider.
 *
 * kvThrottleGate keeps it as a kv key (Redis in production) that expires with the wait:
 * `oauth:not-before:<mailerId>` = the epoch ms. A later Retry-After replaces an earlier one (the
 * provider's newest answer is the current truth). The gate fails open: a kv that does not answer
 * means no hold is known, never a failed call.
 */
import type { Kv } from '@mailyard/platform';

export interface ThrottleGate {
  /** Epoch ms before which the provider must not be called for this mailer; null when free. */
  notBefore(): Promise<number | null>;
  /** Records the provider's Retry-After: no call before `untilMs` (epoch ms). */
  hold(untilMs: number): Promise<void>;
}

export const notBeforeKey = (mailerId: string) => `oauth:not-before:${mailerId}`;

export function kvThrottleGate(kv: Kv, mailerId: string, now: () => number = Date.now): ThrottleGate {
  const key = notBeforeKey(mailerId);
  return {
    async notBefore() {
      const value = await kv.get(key).catch(() => null);
      const at = value === null ? Number.NaN : Number(value);
      return Number.isFinite(at) && at > now() ? at : null;
    },
    async hold(untilMs) {
      const ttl = Math.ceil(untilMs - now());
      if (ttl <= 0) return;
      await kv.set(key, String(Math.ceil(untilMs)), ttl).catch(() => false);
    },
  };
}
