/**
 * ScheduledJob: one replica per pass through the kv lock, on real Redis (two clients, as two
 * replicas would have) and on the in-process kv (two jobs sharing it).
 */
import { REDIS_URL, testRedisPrefix } from '@mailyard/testkit/servers';
import { ScheduledJob, type ScheduledJobOptions } from '../src/jobs/scheduled-job';
import { type Kv, createMemoryKv } from '../src/kv';
import { openRedisKv } from '../src/kv/redis';
import { createLogger } from '../src/logger/logger';

const logger = createLogger('scheduled-job-test', 'error');

async function waitFor(
  what: string,
  ok: () => boolean | Promise<boolean>,
  timeoutMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A pass that holds until released, so tests decide when it ends. */
function gate() {
  let open: () => void = () => {};
  let opened = new Promise<void>((r) => {
    open = r;
  });
  return {
    wait: () => opened,
    open: () => open(),
    reset: () => {
      opened = new Promise<void>((r) => {
        open = r;
      });
    },
  };
}

function describeJob(name: string, replicas: () => { kvs: [Kv, Kv]; close: () => Promise<void> }): void {
  describe(`ScheduledJob (${name})`, () => {
    let kvs: [Kv, Kv];
    let close: () => Promise<void>;
    const jobs: ScheduledJob[] = [];
    let n = 0;

    beforeAll(async () => {
      ({ kvs, close } = replicas());
      for (const kv of kvs)
        await waitFor('the kv', () =>
          kv.check().then(
            () => true,
            () => false,
          ),
        );
    });
    afterEach(async () => {
      await Promise.all(jobs.splice(0).map((j) => j.stop()));
    });
    afterAll(async () => {
      await close();
    });

    /** Two replicas of one job (same lock key), each on its own kv client. */
    const pair = (opts: Partial<ScheduledJobOptions> & Pick<ScheduledJobOptions, 'run'>) => {
      const lockKey = `job-${++n}`;
      const made = kvs.map(
        (kv) => new ScheduledJob({ name: 'test job', lockKey, intervalMs: 60_000, kv, logger, ...opts }),
      ) as [ScheduledJob, ScheduledJob];
      jobs.push(...made);
      return { jobs: made, lockKey };
    };

    it('runs a pass on one replica only; the other skips it; the lock is released after', async () => {
      const g = gate();
      let runs = 0;
      const {
        jobs: [a, b],
      } = pair({
        run: async () => {
          runs++;
          await g.wait();
        },
      });
      const first = a.runOnce();
      await waitFor('the first pass to start', () => runs === 1);
      expect(await b.runOnce()).toBe('skipped');
      g.open();
      expect(await first).toBe('ran');
      expect(runs).toBe(1);
      // Released: the next pass may run anywhere.
      expect(await b.runOnce()).toBe('ran');
      expect(runs).toBe(2);
    });

    it('scheduled replicas never run a pass at the same time, and stop() waits for a running pass', async () => {
      let active = 0;
      let maxActive = 0;
      let passes = 0;
      const {
        jobs: [a, b],
      } = pair({
        intervalMs: 5,
        jitterMs: 5,
        run: async () => {
          active++;
          maxActive = Math.max(maxActive, active);
          await new Promise((r) => setTimeout(r, 15));
          active--;
          passes++;
        },
      });
      a.start();
      b.start();
      await waitFor('20 passes', () => passes >= 20);
      await Promise.all([a.stop(), b.stop()]);
      expect(maxActive).toBe(1);
      expect(active).toBe(0);
      const after = passes;
      await new Promise((r) => setTimeout(r, 100)); // stopped: no pass may start any more
      expect(passes).toBe(after);
    });

    it('a failed pass is reported and releases the lock', async () => {
      const {
        jobs: [a, b],
      } = pair({
        run: async () => {
          throw new Error('boom');
        },
      });
      expect(await a.runOnce()).toBe('failed');
      expect(await b.runOnce()).toBe('failed');
    });

    it('keeps the lock past its TTL while a pass runs, and signals a lost lock', async () => {
      const g = gate();
      let signal: AbortSignal | null = null;
      const {
        jobs: [a, b],
        lockKey,
      } = pair({
        lockTtlMs: 300,
        run: async (s) => {
          signal = s;
          await g.wait();
        },
      });
      const first = a.runOnce();
      await waitFor('the pass to start', () => signal !== null);
      const started = Date.now();
      while (Date.now() - started < 1_000) {
        expect(await b.runOnce()).toBe('skipped'); // extended every 100 ms: never free
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(signal!.aborted).toBe(false);
      await kvs[0].del(lockKey);
      await waitFor('the lost lock to be signalled', () => signal!.aborted);
      g.open();
      expect(await first).toBe('ran');
    });

    it('a replica that died holding the lock is replaced once its TTL ran out', async () => {
      const {
        jobs: [a],
        lockKey,
      } = pair({ run: async () => {} });
      const dead = await kvs[1].acquireLock(lockKey, 300);
      expect(dead).not.toBeNull();
      expect(await a.runOnce()).toBe('skipped');
      await waitFor('the dead holder’s lock to expire', async () => (await a.runOnce()) === 'ran');
    });
  });
}

describeJob('redis', () => {
  const prefix = testRedisPrefix();
  const a = openRedisKv(REDIS_URL, { keyPrefix: prefix });
  const b = openRedisKv(REDIS_URL, { keyPrefix: prefix });
  return { kvs: [a, b], close: async () => void (await Promise.all([a.close(), b.close()])) };
});

describeJob('in-process', () => {
  const kv = createMemoryKv();
  return { kvs: [kv, kv], close: () => kv.close() };
});
