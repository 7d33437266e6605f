/**
 * When a stored access token is used and when it is refreshed (refresh ahead of expiry):
 *
 * - `fresh`: more than `aheadMs` of life left: use it.
 * - `expiring`: still valid but within `aheadMs` of its expiry: refresh it; if the provider is
 *   busy meanwhile, the current token may still be used until it really expires.
 * - `expired` (or none stored): refresh; nothing else will do.
 */
export type TokenFreshness = 'fresh' | 'expiring' | 'expired';

export function tokenFreshness(
  token: { accessToken: string | null; accessExpiresAt: Date | null },
  nowMs: number,
  aheadMs: number,
): TokenFreshness {
  if (!token.accessToken || !token.accessExpiresAt) return 'expired';
  const left = token.accessExpiresAt.getTime() - nowMs;
  if (left <= 0) return 'expired';
  return left > aheadMs ? 'fresh' : 'expiring';
}
