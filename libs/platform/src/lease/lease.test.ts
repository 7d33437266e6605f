import { createMemoryKv } from '../kv/memory';
import { acquireKvLease } from './kv-lease';
import { type Lease, keepLeaseAlive, renewEveryMs } from './lease';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function scriptedLease(ttlMs: number, answers: Array<boolean | Error>): Lease & { renewals: number } {
  const lease = {
    ttlMs,
    renewals: 0,
    renew: async () => {
      const answer = answers[Math.min(lease.renewals++, answers.length - 1)];
      if (answer instanceof Error) throw answer;
      return answer ?? true;
    },
    release: async () => true,
  };
  return lease;
}

describe('renewEveryMs', () => {
  it('renews every third of the lease, never more often than the floor', () => {
    expect(renewEveryMs(30_000)).toBe(10_000);
    expect(renewEveryMs(10)).toBe(3);
    expect(renewEveryMs(30_000, 20_000)).toBe(20_000);
    expect(renewEveryMs(1)).toBe(1);
  });
});

describe('keepLeaseAlive', () => {
  it('renews until stopped', async () => {
    const lease = scriptedLease(30, [true]);
    const stop = keepLeaseAlive(lease);
    await pause(75);
    stop();
    const renewals = lease.renewals;
    expect(renewals).toBeGreaterThanOrEqual(3);
    await pause(40);
    expect(lease.renewals).toBe(renewals);
  });

  it('says when the lease was lost, and when a renewal failed', async () => {
    const lost = jest.fn();
    const failed = jest.fn();
    const boom = new Error('kv down');
    const lease = scriptedLease(15, [boom, false]);
    const stop = keepLeaseAlive(lease, { onLost: lost, onError: failed });
    await pause(40);
    stop();
    expect(failed).toHaveBeenCalledWith(boom);
    expect(lost).toHaveBeenCalled();
  });

  it('swallows failures nobody listens to', async () => {
    const lease = scriptedLease(15, [new Error('db down')]);
    const stop = keepLeaseAlive(lease);
    await pause(30);
    stop();
    expect(lease.renewals).toBeGreaterThan(0);
  });
});

describe('acquireKvLease', () => {
  it('holds the kv lock: one holder at a time, renewed and released only by its holder', async () => {
    const kv = createMemoryKv();
    const first = await acquireKvLease(kv, 'work', 1_000);
    expect(first?.ttlMs).toBe(1_000);
    expect(await acquireKvLease(kv, 'work', 1_000)).toBeNull();
    expect(await first!.renew()).toBe(true);
    expect(await first!.release()).toBe(true);
    expect(await first!.renew()).toBe(false);
    expect(await first!.release()).toBe(false);
    const second = await acquireKvLease(kv, 'work', 1_000);
    expect(second).not.toBeNull();
    await kv.close();
  });
});
