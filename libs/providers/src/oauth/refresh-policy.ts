/**
 * When a stored access token is used and when it is refreshed (refresh ahead of expiry):
 *
 * - `fresh`: more than `aheadMs` of life left: use it.
 * - `expiring`: still valid but within `aheadMs` of its expiry: refresh it; if the provider is
 *   busy meanwhile, the current token may still be used until it really expires.
 * - `expired` (or none stored): refresh; nothing else will do.
 *
 * `rejected`: the token a provider API just refused (401, api/token.ts). The stored token is
 * then `expired` when it is that token, whatever its stored expiry says (the provider ended it
 * early); a different stored token (another caller refreshed meanwhile) is judged as usual.
 */
export type TokenFreshness = 'fresh' | 'expiring' | 'expired';

export function tokenFreshness(
  token: { accessToken: string | null; accessExpiresAt: Date | null },
  nowMs: number,
  aheadMs: number,
  rejected?: string,
): TokenFreshness {
  if (!token.accessToken || !token.accessExpiresAt) return 'expired';
  if (rejected !== undefined && token.accessToken === rejected) return 'expired';
  const left = token.accessExpiresAt.getTime() - nowMs;
  if (left <= 0) return 'expired';
  return left > aheadMs ? 'fresh' : 'expiring';
}
