import { randomBytes } from 'node:crypto';
import { type Kv, windowKey } from './types';

interface Entry {
  value: string;
  expiresAt: number;
}

/** In-process Kv for the embedded single-process mode. */
export function createMemoryKv(): Kv {
  const store = new Map<string, Entry>();
  const live = (key: string): Entry | undefined => {
    const e = store.get(key);
    if (e && e.expiresAt <= Date.now()) {
      store.delete(key);
      return undefined;
    }
    return e;
  };
  const sweep = setInterval(() => {
    const now = Date.now();
    for (const [key, e] of store) if (e.expiresAt <= now) store.delete(key);
  }, 30_000);
  sweep.unref();

  return {
    kind: 'memory',
    async hitWindow(key, windowMs, hits = 1) {
      const windowStart = Math.floor(Date.now() / windowMs) * windowMs;
      const wk = windowKey(key, windowMs, windowStart);
      const e = live(wk);
      const count = (e ? Number(e.value) : 0) + hits;
      store.set(wk, { value: String(count), expiresAt: windowStart + windowMs + 1000 });
      return { count, resetAtMs: windowStart + windowMs };
    },
    async acquireLock(key, ttlMs) {
      if (live(key)) return null;
      const token = randomBytes(16).toString('hex');
      store.set(key, { value: token, expiresAt: Date.now() + ttlMs });
      return token;
    },
    async extendLock(key, token, ttlMs) {
      const e = live(key);
      if (!e || e.value !== token) return false;
      e.expiresAt = Date.now() + ttlMs;
      return true;
    },
    async releaseLock(key, token) {
      const e = live(key);
      if (!e || e.value !== token) return false;
      store.delete(key);
      return true;
    },
    async get(key) {
      return live(key)?.value ?? null;
    },
    async set(key, value, ttlMs, opts = {}) {
      if (opts.onlyIfAbsent && live(key)) return false;
      store.set(key, { value, expiresAt: Date.now() + ttlMs });
      return true;
    },
    async del(key) {
      store.delete(key);
    },
    async check() {},
    async close() {
      clearInterval(sweep);
      store.clear();
    },
  };
}
