import type { Config } from '../config/env';
import { createMemoryKv } from './memory';
import { openRedisKv } from './redis';
import type { Kv } from './types';

export * from './types';
export { createMemoryKv } from './memory';
export { openRedisKv } from './redis';

/** Redis when REDIS_URL is set, else in-process. */
export function openKv(config: Pick<Config, 'REDIS_URL' | 'REDIS_KEY_PREFIX'>): Kv {
  return config.REDIS_URL
    ? openRedisKv(config.REDIS_URL, { keyPrefix: config.REDIS_KEY_PREFIX })
    : createMemoryKv();
}
