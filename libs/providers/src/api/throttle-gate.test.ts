import { type Kv, createMemoryKv, openKv } from '@mailyard/platform';
import { kvThrottleGate, notBeforeKey } from './throttle-gate';

describe('kvThrottleGate', () => {
  let t = 1_000_000;
  const now = () => t;
  let kv: Kv;
  beforeEach(() => {
    t = 1_000_000;
    kv = createMemoryKv();
  });

  it('is free until a hold is recorded; then answers the hold until it has passed', async () => {
    const gate = kvThrottleGate(kv, 'm1', now);
    expect(await gate.notBefore()).toBeNull();
    await gate.hold(t + 30_000);
    expect(await kv.get(notBeforeKey('m1'))).toBe(String(t + 30_000));
    expect(await gate.notBefore()).toBe(t + 30_000);
    t += 29_999;
    expect(await gate.notBefore()).toBe(1_030_000);
    t += 1;
    expect(await gate.notBefore()).toBeNull();
  });

  it('is per mailer, and shared by every gate of that mailer (another process, another replica)', async () => {
    await kvThrottleGate(kv, 'm1', now).hold(t + 5000);
    expect(await kvThrottleGate(kv, 'm1', now).notBefore()).toBe(t + 5000);
    expect(await kvThrottleGate(kv, 'm2', now).notBefore()).toBeNull();
  });

  it('a newer Retry-After replaces the earlier one; a moment already past records nothing', async () => {
    const gate = kvThrottleGate(kv, 'm1', now);
    await gate.hold(t + 60_000);
    await gate.hold(t + 10_000);
    expect(await gate.notBefore()).toBe(t + 10_000);
    await kv.del(notBeforeKey('m1'));
    await gate.hold(t);
    expect(await kv.get(notBeforeKey('m1'))).toBeNull();
  });

  it('fails open: a kv that does not answer is no hold, and a hold it cannot store is no error', async () => {
    // A Redis client of a port nothing listens on: every command is refused.
    const down = await openKv({ REDIS_URL: 'redis://127.0.0.1:1', REDIS_KEY_PREFIX: '' });
    try {
      await expect(down.get('x')).rejects.toThrow();
      const gate = kvThrottleGate(down, 'm1', now);
      await expect(gate.hold(t + 1000)).resolves.toBeUndefined();
      await expect(gate.notBefore()).resolves.toBeNull();
    } finally {
      await down.close();
    }
  });

  it('ignores a value that is not a time', async () => {
    await kv.set(notBeforeKey('m1'), 'soon', 10_000);
    expect(await kvThrottleGate(kv, 'm1', now).notBefore()).toBeNull();
  });
});
