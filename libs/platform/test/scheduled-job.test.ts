/**
 * ScheduledJob: one replica per pass through the kv lock, on real Redis (two clients, as two
 * replicas would have) and on the in-process kv (two jobs sharing it).
 */
import { eventually } from '@mailyard/testkit/eventually';
import { REDIS_URL, testRedisPrefix } from '@mailyard/testkit/servers';
import { type PassOutcome, ScheduledJob, type ScheduledJobOptions } from '../src/jobs/scheduled-job';
import { type Kv, createMemoryKv } from '../src/kv';
import { openRedisKv } from '../src/kv/redis';
import { createLogger } from '../src/logger/logger';

const logger = createLogger('scheduled-job-test', 'error');

/** What one replica did with the lock: acquisitions tried (counted when called), refused, extensions that held. */
interface LockCalls {
  acquires: number;
  refused: number;
  extended: number;
}

/** `kv` with its lock calls counted. */
function counted(kv: Kv): { kv: Kv; calls: LockCalls } {
  const calls: LockCalls = { acquires: 0, refused: 0, extended: 0 };
  const wrapped: Kv = Object.create(kv);
  wrapped.acquireLock = (key, ttlMs) => {
    calls.acquires++;
    return kv.acquireLock(key, ttlMs).then((token) => {
      if (token === null) calls.refused++;
      return token;
    });
  };
  wrapped.extendLock = (key, token, ttlMs) =>
    kv.extendLock(key, token, ttlMs).then((held) => {
      if (held) calls.extended++;
      return held;
    });
  return { kv: wrapped, calls };
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
      for (const kv of kvs) await eventually(() => kv.check().then(() => true), 'the kv answering');
    });
    afterEach(async () => {
      await Promise.all(jobs.splice(0).map((j) => j.stop()));
    });
    afterAll(async () => {
      await close();
    });

    /** Two replicas of one job (same lock key), each on its own kv client, their lock calls counted. */
    const pair = (opts: Partial<ScheduledJobOptions> & Pick<ScheduledJobOptions, 'run'>) => {
      const lockKey = `job-${++n}`;
      const replicas = kvs.map(counted);
      const made = replicas.map(
        ({ kv }) => new ScheduledJob({ name: 'test job', lockKey, intervalMs: 60_000, kv, logger, ...opts }),
      ) as [ScheduledJob, ScheduledJob];
      jobs.push(...made);
      return { jobs: made, lockKey, calls: replicas.map((r) => r.calls) as [LockCalls, LockCalls] };
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
      await eventually(() => runs === 1, 'the first pass to start');
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
      let stopping = false;
      const {
        jobs: [a, b],
        calls,
        lockKey,
      } = pair({
        intervalMs: 5,
        jitterMs: 5,
        run: async () => {
          active++;
          maxActive = Math.max(maxActive, active);
          // Each pass holds until the other replica has tried to take the lock and was refused
          // (its own replica does not tick while its pass runs), or until the test stops both.
          const refused = calls[0].refused + calls[1].refused;
          await eventually(
            () => stopping || calls[0].refused + calls[1].refused > refused,
            'the other replica refused the lock',
          );
          active--;
          passes++;
        },
      });
      a.start();
      b.start();
      await eventually(() => passes >= 20, '20 passes');
      stopping = true;
      // Lock attempts of each replica when its stop() returned (the idle one returns at once).
      const triedAtStop = await Promise.all(
        [a, b].map((job, i) => job.stop().then(() => calls[i]!.acquires)),
      );
      expect(maxActive).toBe(1);
      expect(active).toBe(0);
      expect(calls[0].refused + calls[1].refused).toBeGreaterThanOrEqual(20);
      // Stopped: no pass may start any more. A tick left behind would be due within
      // intervalMs + jitterMs (10 ms) of its stop(); a job started now, whose ticks are due later
      // than that, runs twice, and the stopped replicas have not even tried the lock meanwhile.
      let clockTicks = 0;
      const clock = new ScheduledJob({
        name: 'clock',
        lockKey: `${lockKey}-clock`,
        intervalMs: 10,
        jitterMs: 0,
        kv: kvs[0],
        logger,
        run: async () => {
          clockTicks++;
        },
      });
      jobs.push(clock);
      clock.start();
      await eventually(() => clockTicks >= 2, 'two ticks of a job started after the stop');
      expect(calls.map((c) => c.acquires)).toEqual(triedAtStop);
    });

    it('stop() aborts the signal of a running pass and waits for it; firstDelayMs sets the first wait', async () => {
      let signal: AbortSignal | null = null;
      let ended = false;
      const {
        jobs: [a],
      } = pair({
        intervalMs: 3_600_000,
        firstDelayMs: 1,
        jitterMs: 0,
        run: async (s) => {
          signal = s;
          await new Promise<void>((r) => s.addEventListener('abort', () => r(), { once: true }));
          ended = true;
        },
      });
      a.start();
      // The first pass comes after firstDelayMs, not after the hour of the interval.
      await eventually(() => signal !== null, 'the first pass to start');
      await a.stop();
      expect((signal as AbortSignal | null)?.aborted).toBe(true);
      expect(ended).toBe(true);
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
        calls,
      } = pair({
        lockTtlMs: 300,
        run: async (s) => {
          signal = s;
          await g.wait();
        },
      });
      const first = a.runOnce();
      await eventually(() => signal !== null, 'the pass to start');
      // Until the holder has extended the lock four times (every TTL/3: past the TTL of 300 ms),
      // the other replica keeps asking and is refused every time.
      const outcomes: PassOutcome[] = [];
      await eventually(async () => {
        outcomes.push(await b.runOnce());
        return calls[0].extended >= 4;
      }, 'four extensions of the lock');
      expect(outcomes.length).toBeGreaterThan(0);
      expect(outcomes.filter((o) => o !== 'skipped')).toEqual([]);
      expect(signal!.aborted).toBe(false);
      await kvs[0].del(lockKey);
      await eventually(() => signal!.aborted, 'the lost lock to be signalled');
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
      await eventually(async () => (await a.runOnce()) === 'ran', 'the dead holder’s lock to expire');
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
