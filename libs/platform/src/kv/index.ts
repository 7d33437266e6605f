import type { Config } from '../config/env';
import { createMemoryKv } from './memory';
import type { Kv } from './types';

export * from './types';
export { createMemoryKv } from './memory';

/** Redis when REDIS_URL is set, else in-process; the Redis client is loaded only then. */
export async function openKv(config: Pick<Config, 'REDIS_URL' | 'REDIS_KEY_PREFIX'>): Promise<Kv> {
  if (!config.REDIS_URL) return createMemoryKv();
  const { openRedisKv } = await import('./redis');
  return openRedisKv(config.REDIS_URL, { keyPrefix: config.REDIS_KEY_PREFIX });
}
