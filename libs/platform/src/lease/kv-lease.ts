/**
 * Leases kept in the kv store (Redis, or in-process): a lock with an owner token and a TTL
 * (kv acquireLock / extendLock / releaseLock), as a Lease (lease.ts).
 */
import type { Kv } from '../kv/types';
import type { Lease } from './lease';

/** Takes the lease `key` for `ttlMs` when nobody holds it; null when another holder has it. */
export async function acquireKvLease(kv: Kv, key: string, ttlMs: number): Promise<Lease | null> {
  const token = await kv.acquireLock(key, ttlMs);
  if (!token) return null;
  return {
    ttlMs,
    renew: () => kv.extendLock(key, token, ttlMs),
    release: () => kv.releaseLock(key, token),
  };
}
