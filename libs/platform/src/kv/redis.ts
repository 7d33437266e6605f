import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { type Kv, type WindowHit, windowKey } from './types';

// INCRBY and set the expiry when this call created the key, in one round trip; returns the count.
const HIT_WINDOW = `
local hits = tonumber(ARGV[2])
local n = redis.call('INCRBY', KEYS[1], hits)
if n == hits then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n`;

const EXTEND_IF_OWNER = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0`;

const RELEASE_IF_OWNER = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

type ScriptedRedis = Redis & {
  hitWindow(key: string, ttlMs: number, hits: number): Promise<number>;
  extendIfOwner(key: string, token: string, ttlMs: number): Promise<number>;
  releaseIfOwner(key: string, token: string): Promise<number>;
};

export interface RedisKvOptions {
  keyPrefix?: string;
  /** Per-command timeout; a slow or dead Redis fails fast so callers can fail open. */
  commandTimeoutMs?: number;
}

export function openRedisKv(url: string, opts: RedisKvOptions = {}): Kv {
  const prefix = opts.keyPrefix ?? '';
  const redis = new Redis(url, {
    commandTimeout: opts.commandTimeoutMs ?? 500,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    lazyConnect: false,
    // Commands issued in the same tick (concurrent requests' rate-limit hits) share one write.
    enableAutoPipelining: true,
    retryStrategy: (times) => Math.min(times * 200, 2000),
  }) as ScriptedRedis;
  // Connection errors surface on commands; the 'error' event alone must not crash the process.
  redis.on('error', () => {});
  redis.defineCommand('hitWindow', { numberOfKeys: 1, lua: HIT_WINDOW });
  redis.defineCommand('extendIfOwner', { numberOfKeys: 1, lua: EXTEND_IF_OWNER });
  redis.defineCommand('releaseIfOwner', { numberOfKeys: 1, lua: RELEASE_IF_OWNER });
  const k = (key: string) => prefix + key;

  return {
    kind: 'redis',
    async hitWindow(key: string, windowMs: number, hits = 1): Promise<WindowHit> {
      const windowStart = Math.floor(Date.now() / windowMs) * windowMs;
      const count = await redis.hitWindow(k(windowKey(key, windowMs, windowStart)), windowMs + 1000, hits);
      return { count, resetAtMs: windowStart + windowMs };
    },
    async acquireLock(key, ttlMs) {
      const token = randomBytes(16).toString('hex');
      const ok = await redis.set(k(key), token, 'PX', ttlMs, 'NX');
      return ok === 'OK' ? token : null;
    },
    async extendLock(key, token, ttlMs) {
      return (await redis.extendIfOwner(k(key), token, ttlMs)) === 1;
    },
    async releaseLock(key, token) {
      return (await redis.releaseIfOwner(k(key), token)) === 1;
    },
    get: (key) => redis.get(k(key)),
    async set(key, value, ttlMs, setOpts = {}) {
      const res = setOpts.onlyIfAbsent
        ? await redis.set(k(key), value, 'PX', ttlMs, 'NX')
        : await redis.set(k(key), value, 'PX', ttlMs);
      return res === 'OK';
    },
    async del(key) {
      await redis.del(k(key));
    },
    async check() {
      await redis.ping();
    },
    async close() {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
