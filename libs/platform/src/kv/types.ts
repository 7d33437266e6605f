export interface WindowHit {
  /** Requests counted in the current window, these included. */
  count: number;
  /** When the current window ends (ms since epoch). */
  resetAtMs: number;
}

/** Short-lived shared state: rate-limit counters, locks, idempotency keys. */
/**
 * The stored counter of one fixed window. The window's length is part of it: windows of different
 * lengths of one key start together at every multiple of both (the first minute of each hour for 1
 * minute and 1 hour), and would otherwise share one count.
 */
export function windowKey(key: string, windowMs: number, windowStart: number): string {
  return `${key}:${windowMs}:${windowStart}`;
}

export interface Kv {
  readonly kind: 'redis' | 'memory';
  /** Atomically counts `hits` (default 1) in the fixed window of `windowMs` that contains now. */
  hitWindow(key: string, windowMs: number, hits?: number): Promise<WindowHit>;
  /** Takes the lock when free; returns the owner token, or null when someone else holds it. */
  acquireLock(key: string, ttlMs: number): Promise<string | null>;
  /** Extends the lock only when `token` still owns it. */
  extendLock(key: string, token: string, ttlMs: number): Promise<boolean>;
  /** Releases the lock only when `token` still owns it. */
  releaseLock(key: string, token: string): Promise<boolean>;
  get(key: string): Promise<string | null>;
  /** Sets `key` with a TTL; with `onlyIfAbsent` returns false when it already existed. */
  set(key: string, value: string, ttlMs: number, opts?: { onlyIfAbsent?: boolean }): Promise<boolean>;
  del(key: string): Promise<void>;
  check(): Promise<void>;
  close(): Promise<void>;
}
