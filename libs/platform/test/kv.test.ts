import { eventually } from '@mailyard/testkit/eventually';
import { REDIS_URL, testRedisPrefix } from '@mailyard/testkit/servers';
import Redis from 'ioredis';
import { type Kv, createMemoryKv, windowKey } from '../src/kv';
import { openRedisKv } from '../src/kv/redis';

function describeKv(name: string, make: () => Kv): void {
  describe(`kv contract (${name})`, () => {
    let kv: Kv;
    beforeAll(async () => {
      kv = make();
      await eventually(() => kv.check().then(() => true), `the ${name} kv answering`);
    });
    afterAll(async () => {
      await kv.close();
    });

    it('counts hits in one fixed window', async () => {
      const windowMs = 3_600_000;
      const results = await Promise.all(Array.from({ length: 20 }, () => kv.hitWindow('hits', windowMs)));
      for (const r of results) expect(r.resetAtMs % windowMs).toBe(0);
      // Each window (normally one; two if the hits straddle a boundary) counts exactly 1..n, once each.
      const byWindow = new Map<number, number[]>();
      for (const r of results) byWindow.set(r.resetAtMs, [...(byWindow.get(r.resetAtMs) ?? []), r.count]);
      for (const counts of byWindow.values()) {
        expect(counts.sort((a, b) => a - b)).toEqual(counts.map((_, i) => i + 1));
      }
      // A key of its own starts again at 1.
      expect((await kv.hitWindow('other-hits', windowMs)).count).toBe(1);
    });

    it('counts windows of different lengths of one key apart, also where they start together', async () => {
      // Both windows are longer than the epoch so far: both start at 0, now and in every run.
      const long = 10_000_000_000_000;
      await kv.hitWindow('two-windows', long);
      expect((await kv.hitWindow('two-windows', long)).count).toBe(2);
      expect((await kv.hitWindow('two-windows', long * 2)).count).toBe(1);
    });

    it('counts several hits in one call', async () => {
      const windowMs = 3_600_000;
      const first = await kv.hitWindow('batched-hits', windowMs, 5);
      const second = await kv.hitWindow('batched-hits', windowMs, 3);
      expect(first.count).toBe(5);
      // 8 in the same window; 3 if the hour rolled over between the two calls.
      expect(second.count).toBe(second.resetAtMs === first.resetAtMs ? 8 : 3);
    });

    it('locks with an owner token: only the owner extends or releases', async () => {
      const token = await kv.acquireLock('lock', 5000);
      expect(token).toEqual(expect.any(String));
      expect(await kv.acquireLock('lock', 5000)).toBeNull();
      expect(await kv.extendLock('lock', 'not-the-owner', 5000)).toBe(false);
      expect(await kv.releaseLock('lock', 'not-the-owner')).toBe(false);
      expect(await kv.extendLock('lock', token!, 5000)).toBe(true);
      expect(await kv.releaseLock('lock', token!)).toBe(true);
      expect(await kv.acquireLock('lock', 5000)).toEqual(expect.any(String));
    });

    it('expires locks after their TTL', async () => {
      const first = await kv.acquireLock('short', 50);
      expect(first).toEqual(expect.any(String));
      // Free again once the TTL ran out (the lock test above shows a live lock is refused).
      const next = await eventually(() => kv.acquireLock('short', 50), 'the expired lock to be free');
      expect(next).not.toBe(first);
      expect(await kv.releaseLock('short', first!)).toBe(false);
    });

    it('sets values with TTL and only-if-absent', async () => {
      expect(await kv.set('k', 'v1', 5000, { onlyIfAbsent: true })).toBe(true);
      expect(await kv.set('k', 'v2', 5000, { onlyIfAbsent: true })).toBe(false);
      expect(await kv.get('k')).toBe('v1');
      await kv.del('k');
      expect(await kv.get('k')).toBeNull();
    });
  });
}

describeKv('memory', () => createMemoryKv());
describeKv('redis', () => openRedisKv(REDIS_URL, { keyPrefix: testRedisPrefix() }));

describe('redis kv window counters', () => {
  it('expire after their window, whether the first call counted one hit or several', async () => {
    const prefix = testRedisPrefix();
    const kv = openRedisKv(REDIS_URL, { keyPrefix: prefix });
    const redis = new Redis(REDIS_URL);
    try {
      await eventually(() => kv.check().then(() => true), 'the redis kv connected');
      const windowMs = 3_600_000;
      const one = await kv.hitWindow('one', windowMs);
      const several = await kv.hitWindow('several', windowMs, 4);
      await kv.hitWindow('several', windowMs, 2);
      for (const [name, hit] of [
        ['one', one],
        ['several', several],
      ] as const) {
        const ttl = await redis.pttl(`${prefix}${windowKey(name, windowMs, hit.resetAtMs - windowMs)}`);
        expect(ttl).toBeGreaterThan(0);
        expect(ttl).toBeLessThanOrEqual(windowMs + 1000);
      }
    } finally {
      await kv.close();
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length) await redis.del(...keys);
      redis.disconnect();
    }
  });
});

describe('redis kv when Redis is unreachable', () => {
  it('fails fast instead of queueing commands', async () => {
    const kv = openRedisKv('redis://127.0.0.1:1', { commandTimeoutMs: 200 });
    try {
      await expect(kv.hitWindow('x', 60_000)).rejects.toThrow();
      await expect(kv.check()).rejects.toThrow();
    } finally {
      await kv.close();
    }
  });
});
