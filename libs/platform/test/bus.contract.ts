/**
 * The behaviour every Bus implementation must have (docs/architecture.md "Stores and the bus"). Run by
 * bus-memory.test.ts and bus-amqp.test.ts. Timing assertions are lower bounds only; nothing must
 * happen within a time, and no test sleeps. "Nothing else arrived" is proven by an end marker
 * published last that did arrive (a queue delivers in publish order), "no retry is still on its
 * way" by markers sent through the queue's delay queues after the consumer settled (a delay
 * queue lets messages out in the order they went in), "cancel()/close() did not return early" by
 * a message that travelled through the broker while they were waiting.
 */
import { type BusEnvelope, Exchange, type ExchangeName } from '@mailyard/contracts';
import { uniqueName } from '@mailyard/testkit/servers';
import { envelope } from '../src/bus/envelope';
import { type Binding, type Bus, type Consumer, type Delivery, PermanentError } from '../src/bus/types';
import { currentTrace } from '../src/trace/context';

type Payload = { n: number; tag?: string; nested?: { list: number[] } };

/** Polls `cond` until true; fails with `what` after `timeoutMs` (a liveness guard, not a timing assertion). */
export async function waitFor(
  cond: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise<void>((r) => setTimeout(r, 20));
  }
}

export function deferred<T = void>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** Payload `n` of the end marker: published last, its arrival proves what came before has. */
const END = -1;

export function describeBusContract(name: string, factory: () => Promise<Bus>): void {
  describe(`Bus contract: ${name}`, () => {
    let bus: Bus;
    let ns: string;
    const consumers: Consumer[] = [];

    beforeEach(async () => {
      bus = await factory();
      ns = uniqueName('t');
    });

    afterEach(async () => {
      await Promise.all(consumers.splice(0).map((c) => c.cancel()));
      await bus.close();
    });

    const queueName = (label: string) => `${ns}.${label}`;
    const env = (n: number, extra: Partial<Payload> = {}) =>
      envelope<Payload>('test.event', { n, ...extra }, { tenantId: 'tn_1' });

    /** Starts a consumer that records every delivery; `handle` may throw to fail it. */
    async function collect(
      queue: string,
      bindings: Binding[],
      opts: { prefetch?: number; retryDelaysMs?: number[] } = {},
      handle: (d: Delivery<Payload>) => Promise<void> | void = () => {},
    ) {
      const received: Delivery<Payload>[] = [];
      const at: number[] = [];
      const consumer = await bus.consume<Payload>({ queue, bindings, ...opts }, async (d) => {
        received.push(d);
        at.push(Date.now());
        await handle(d);
      });
      consumers.push(consumer);
      return {
        received,
        at,
        consumer,
        /** Payload numbers received, the end marker left out. */
        ns: () => received.map((d) => d.envelope.payload.n).filter((n) => n !== END),
      };
    }

    const ends = (q: { received: Delivery<Payload>[] }) =>
      q.received.filter((d) => d.envelope.payload.n === END).length;

    /**
     * Publishes the end marker to `key` (which must route to `q`) and waits until `q` has it:
     * every message published before it that was routed to `q` has then been received.
     */
    async function untilEnd(q: { received: Delivery<Payload>[] }, exchange: ExchangeName, key: string) {
      const before = ends(q);
      await bus.publish(exchange, key, env(END));
      await waitFor(() => ends(q) > before, `end marker via ${key}`);
    }

    /**
     * What reached `queue` after its consumer `q` settled everything it was given: cancels `q`
     * (cancel waits for the handlers and for the retries or parkings they caused to be written),
     * starts a plain consumer on the queue and sends an end marker through the queue's delay
     * queue of each of `delaysMs` (and of 0). A delayed message leaves its delay queue in the
     * order it went in, so a retry scheduled before the cancel arrives before the marker of its
     * delay; once every marker is in, nothing else is on its way. Returns the payload numbers the
     * plain consumer got besides the markers.
     */
    async function afterSettled(
      q: { consumer: Consumer },
      queue: string,
      bindings: Binding[],
      delaysMs: number[],
    ): Promise<number[]> {
      await q.consumer.cancel();
      const rest = await collect(queue, bindings);
      const markers = [...new Set([0, ...delaysMs])];
      for (const ms of markers) await bus.publishDelayed(queue, env(END), ms);
      await waitFor(() => ends(rest) === markers.length, 'the end marker of every delay');
      return rest.ns();
    }

    it('routes by topic pattern: `*` matches one word, `#` zero or more', async () => {
      const a = await collect(queueName('a'), [{ exchange: Exchange.events, routingKey: `${ns}.email.*` }]);
      const b = await collect(queueName('b'), [{ exchange: Exchange.events, routingKey: `${ns}.email.#` }]);
      const c = await collect(queueName('c'), [
        { exchange: Exchange.commands, routingKey: `${ns}.email.delivered` },
      ]);
      const d = await collect(queueName('d'), [
        { exchange: Exchange.events, routingKey: `${ns}.*.delivered` },
        { exchange: Exchange.events, routingKey: `${ns}.#.delivered` },
      ]);

      await bus.publish(Exchange.events, `${ns}.email.delivered`, env(1)); // a, b, d (once)
      await bus.publish(Exchange.events, `${ns}.email.bounce.hard`, env(2)); // b
      await bus.publish(Exchange.events, `${ns}.email`, env(3)); // b (# = zero words)
      await bus.publish(Exchange.events, `${ns}.domain.delivered`, env(4)); // d
      await bus.publish(Exchange.events, `${ns}.other`, env(5)); // nobody
      await bus.publish(Exchange.commands, `${ns}.email.delivered`, env(6)); // c

      await waitFor(
        () => a.received.length >= 1 && b.received.length >= 3 && c.received.length >= 1,
        'routed messages',
      );
      await waitFor(() => d.received.length >= 2, 'routed messages on d');
      await untilEnd(a, Exchange.events, `${ns}.email.end`); // a and b
      await untilEnd(c, Exchange.commands, `${ns}.email.delivered`);
      await untilEnd(d, Exchange.events, `${ns}.end.delivered`);
      expect(a.ns()).toEqual([1]);
      expect(b.ns().sort()).toEqual([1, 2, 3]);
      expect(c.ns()).toEqual([6]);
      expect(d.ns().sort()).toEqual([1, 4]);
      expect(c.received[0]!.exchange).toBe(Exchange.commands);
      expect(b.received.find((x) => x.envelope.payload.n === 2)!.routingKey).toBe(`${ns}.email.bounce.hard`);
    });

    it('fans out: every bound queue gets its own copy, unaffected by other consumers or the publisher', async () => {
      const aGotIt = deferred();
      const key = `${ns}.fan`;
      const a = await collect(queueName('a'), [{ exchange: Exchange.events, routingKey: key }], {}, (d) => {
        d.envelope.payload.nested!.list.push(99);
        d.envelope.payload.tag = 'mutated by a';
        aGotIt.resolve();
      });
      const snapshots: Payload[] = [];
      const b = await collect(
        queueName('b'),
        [{ exchange: Exchange.events, routingKey: key }],
        {},
        async (d) => {
          await aGotIt.promise;
          snapshots.push(JSON.parse(JSON.stringify(d.envelope.payload)));
        },
      );

      const message = env(7, { tag: 'original', nested: { list: [1, 2] } });
      await bus.publish(Exchange.events, key, message);
      message.payload.nested!.list.push(3);
      message.payload.tag = 'mutated by publisher';

      await waitFor(() => snapshots.length === 1 && a.received.length === 1, 'both copies');
      expect(snapshots[0]).toEqual({ n: 7, tag: 'original', nested: { list: [1, 2] } });
      expect(b.received).toHaveLength(1);
      expect(a.received[0]!.envelope.payload.nested!.list).toEqual([1, 2, 99]);
    });

    it('delivers nothing to queues bound to other keys or to the other exchange', async () => {
      const other = await collect(queueName('other'), [
        { exchange: Exchange.events, routingKey: `${ns}.x.y` },
        { exchange: Exchange.commands, routingKey: `${ns}.send` },
      ]);
      const target = await collect(queueName('target'), [
        { exchange: Exchange.events, routingKey: `${ns}.send` },
      ]);
      await bus.publish(Exchange.events, `${ns}.send`, env(1));
      await bus.publish(Exchange.events, `${ns}.x`, env(2));
      await bus.publish(Exchange.events, `${ns}.x.y.z`, env(3));
      await waitFor(() => target.received.length === 1, 'the routed message');
      await untilEnd(other, Exchange.events, `${ns}.x.y`);
      expect(other.ns()).toEqual([]);
    });

    it('delivers the envelope intact with exchange, routing key, failures 0 and the trace context', async () => {
      const seenTrace: (string | undefined)[] = [];
      const seenTenant: (string | undefined)[] = [];
      const q = await collect(
        queueName('q'),
        [{ exchange: Exchange.events, routingKey: `${ns}.#` }],
        {},
        () => {
          seenTrace.push(currentTrace()?.traceparent);
          seenTenant.push(currentTrace()?.tenantId);
        },
      );
      const message = env(1, { nested: { list: [1] } });
      await bus.publish(Exchange.events, `${ns}.email.sent`, message);
      await waitFor(() => q.received.length === 1, 'the message');
      const d = q.received[0]!;
      expect(d.envelope).toEqual(JSON.parse(JSON.stringify(message)));
      expect(d.envelope.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
      expect(d.exchange).toBe(Exchange.events);
      expect(d.routingKey).toBe(`${ns}.email.sent`);
      expect(d.failures).toBe(0);
      expect(d.redelivered).toBe(false);
      expect(seenTrace).toEqual([message.traceparent]);
      expect(seenTenant).toEqual(['tn_1']);
    });

    it('acks on success: a restarted consumer does not get the message again', async () => {
      const queue = queueName('q');
      const bindings = [{ exchange: Exchange.events, routingKey: `${ns}.ack` }];
      const first = await collect(queue, bindings);
      await bus.publish(Exchange.events, `${ns}.ack`, env(1));
      await waitFor(() => first.received.length === 1, 'first delivery');
      await first.consumer.cancel();
      const second = await collect(queue, bindings);
      await untilEnd(second, Exchange.events, `${ns}.ack`);
      expect(second.ns()).toEqual([]);
      expect(await bus.parked(queue)).toEqual([]);
    });

    it('keeps messages for a declared queue without a consumer until one starts', async () => {
      const queue = queueName('q');
      const bindings = [{ exchange: Exchange.events, routingKey: `${ns}.later` }];
      const declare = await collect(queue, bindings);
      await declare.consumer.cancel();
      await bus.publish(Exchange.events, `${ns}.later`, env(1));
      await bus.publish(Exchange.events, `${ns}.later`, env(2));
      const consumer = await collect(queue, bindings);
      await waitFor(() => consumer.received.length === 2, 'queued messages');
      expect(consumer.ns()).toEqual([1, 2]);
      expect(declare.received).toHaveLength(0);
    });

    it('retries a failing handler after the retry delays, counting failures, then acks', async () => {
      const queue = queueName('q');
      const bindings = [{ exchange: Exchange.events, routingKey: `${ns}.retry` }];
      const retryDelaysMs = [50, 150, 150];
      const q = await collect(queue, bindings, { retryDelaysMs }, (d) => {
        if (d.failures < 2) throw new Error(`attempt ${d.failures + 1} failed`);
      });
      await bus.publish(Exchange.events, `${ns}.retry`, env(1));
      await waitFor(() => q.received.length === 3, 'three attempts');
      // The third attempt succeeded: no fourth is on its way.
      expect(await afterSettled(q, queue, bindings, retryDelaysMs)).toEqual([]);
      expect(q.received.map((d) => d.failures)).toEqual([0, 1, 2]);
      for (const d of q.received) {
        expect(d.envelope.payload.n).toBe(1);
        expect(d.exchange).toBe(Exchange.events);
        expect(d.routingKey).toBe(`${ns}.retry`);
      }
      // Lower bounds only: a retry never comes before its delay.
      expect(q.at[1]! - q.at[0]!).toBeGreaterThanOrEqual(45);
      expect(q.at[2]! - q.at[1]!).toBeGreaterThanOrEqual(145);
      expect(await bus.parked(queue)).toEqual([]);
    });

    it('parks a message with the reason once the retries are used up', async () => {
      const queue = queueName('q');
      const bindings = [{ exchange: Exchange.events, routingKey: `${ns}.fail` }];
      const retryDelaysMs = [50, 100];
      const q = await collect(queue, bindings, { retryDelaysMs }, () => {
        throw new Error('smtp down');
      });
      const message = env(1);
      await bus.publish(Exchange.events, `${ns}.fail`, message);
      await waitFor(async () => (await bus.parked(queue)).length === 1, 'the parked message');
      // Parked, and not also retried.
      expect(await afterSettled(q, queue, bindings, retryDelaysMs)).toEqual([]);
      expect(q.received.map((d) => d.failures)).toEqual([0, 1, 2]);
      expect(await bus.parked(queue)).toHaveLength(1);
      const [parked] = await bus.parked(queue);
      expect(parked!.envelope).toEqual(JSON.parse(JSON.stringify(message)));
      expect(parked!.reason).toBe('retries exhausted after 3 failures: smtp down');
      expect(parked!.raw).toBeUndefined();
    });

    it('parks at once, without retrying, when the handler throws PermanentError', async () => {
      const queue = queueName('q');
      const bindings = [{ exchange: Exchange.events, routingKey: `${ns}.perm` }];
      const retryDelaysMs = [50, 50];
      const q = await collect(queue, bindings, { retryDelaysMs }, () => {
        throw new PermanentError('recipient address is malformed');
      });
      const message = env(1);
      await bus.publish(Exchange.events, `${ns}.perm`, message);
      await waitFor(async () => (await bus.parked(queue)).length === 1, 'the parked message');
      expect(await afterSettled(q, queue, bindings, retryDelaysMs)).toEqual([]);
      expect(q.received).toHaveLength(1);
      expect(await bus.parked(queue)).toHaveLength(1);
      const [parked] = await bus.parked(queue);
      expect(parked!.envelope.id).toBe(message.id);
      expect(parked!.reason).toBe('permanent error: recipient address is malformed');
    });

    it('parks an invalid envelope without calling the handler and keeps consuming', async () => {
      const queue = queueName('q');
      const q = await collect(queue, [{ exchange: Exchange.events, routingKey: `${ns}.inv` }]);
      const invalid = { not: 'an envelope', payload: 1 } as unknown as BusEnvelope;
      await bus.publish(Exchange.events, `${ns}.inv`, invalid);
      await bus.publish(Exchange.events, `${ns}.inv`, { ...env(2), version: 0 });
      await bus.publish(Exchange.events, `${ns}.inv`, env(3));
      await waitFor(
        async () => q.received.length === 1 && (await bus.parked(queue)).length === 2,
        'parked + valid',
      );
      expect(q.ns()).toEqual([3]);
      const parked = await bus.parked(queue);
      for (const p of parked) {
        expect(p.reason).toMatch(/^invalid message: not a valid envelope/);
        expect(p.envelope.type).toBe('invalid');
        expect(p.raw).toBeDefined();
      }
      const noEnvelope = parked.find((p) => p.raw!.includes('an envelope'))!;
      expect(JSON.parse(noEnvelope.raw!)).toEqual(invalid);
      expect(noEnvelope.envelope.payload).toEqual(invalid);
      expect(noEnvelope.reason).toMatch(/id: Required/);
      const badVersion = parked.find((p) => p !== noEnvelope)!;
      expect(badVersion.reason).toMatch(/version: /);
      expect((JSON.parse(badVersion.raw!) as Payload & { payload: Payload }).payload.n).toBe(2);
    });

    it('parked(queue) lists without removing; parked(queue, true) drains', async () => {
      const queue = queueName('q');
      await collect(queue, [{ exchange: Exchange.events, routingKey: `${ns}.p` }], {}, () => {
        throw new PermanentError('no');
      });
      await bus.publish(Exchange.events, `${ns}.p`, env(1));
      await bus.publish(Exchange.events, `${ns}.p`, env(2));
      await waitFor(async () => (await bus.parked(queue)).length === 2, 'two parked messages');
      const listed = await bus.parked(queue);
      expect(listed.map((p) => (p.envelope.payload as Payload).n).sort()).toEqual([1, 2]);
      expect(await bus.parked(queue)).toHaveLength(2);
      expect(await bus.parked(queue, true)).toHaveLength(2);
      expect(await bus.parked(queue)).toEqual([]);
      expect(await bus.parked(queueName('never-used'))).toEqual([]);
    });

    it('publishDelayed delivers to the queue after the delay, not before', async () => {
      const queue = queueName('q');
      const q = await collect(queue, [{ exchange: Exchange.events, routingKey: `${ns}.now` }]);
      const start = Date.now();
      await bus.publishDelayed(queue, env(1), 500);
      await bus.publish(Exchange.events, `${ns}.now`, env(2));
      await waitFor(() => q.received.length === 2, 'both messages');
      expect(q.ns().sort()).toEqual([1, 2]);
      // Not before the delay (a lower bound: a slow machine only makes it later).
      const i = q.received.findIndex((d) => d.envelope.payload.n === 1);
      expect(q.at[i]! - start).toBeGreaterThanOrEqual(490);
      const delayed = q.received[i]!;
      expect(delayed.exchange).toBe('');
      expect(delayed.routingKey).toBe(queue);
      expect(delayed.failures).toBe(0);
      await expect(bus.publishDelayed(queue, env(3), -1)).rejects.toThrow(/delay must be/);
    });

    it('prefetch limits how many handlers run at once', async () => {
      // Handlers hold until released, so "two at once" needs no timing: it is reached and seen.
      let active = 0;
      let maxActive = 0;
      const release = deferred();
      const q = await collect(
        queueName('q'),
        [{ exchange: Exchange.events, routingKey: `${ns}.pf` }],
        { prefetch: 2 },
        async () => {
          active++;
          maxActive = Math.max(maxActive, active);
          await release.promise;
          active--;
        },
      );
      const witness = await collect(queueName('w'), [{ exchange: Exchange.events, routingKey: `${ns}.pf` }]);
      for (let i = 0; i < 6; i++) await bus.publish(Exchange.events, `${ns}.pf`, env(i));
      try {
        await waitFor(() => active === 2, 'two handlers running at once');
        // Every message is routed (a second queue got all six and the end marker after them),
        // yet only two reached the held consumer.
        await untilEnd(witness, Exchange.events, `${ns}.pf`);
        expect(witness.ns()).toHaveLength(6);
        expect(q.received).toHaveLength(2);
      } finally {
        release.resolve(); // a failure must not leave handlers held (cancel waits for them)
      }
      await waitFor(() => q.received.length === 7 && active === 0, 'six handled messages and the marker');
      expect(maxActive).toBe(2);
      expect(q.ns().sort()).toEqual([0, 1, 2, 3, 4, 5]);
    });

    it('cancel() waits for the in-flight handler, then delivers nothing more', async () => {
      const queue = queueName('q');
      const bindings = [{ exchange: Exchange.events, routingKey: `${ns}.c` }];
      const gate = deferred();
      let finished = false;
      const q = await collect(queue, bindings, {}, async () => {
        await gate.promise;
        finished = true;
      });
      await bus.publish(Exchange.events, `${ns}.c`, env(1));
      await waitFor(() => q.received.length === 1, 'the first message');

      let cancelled = false;
      const cancelling = q.consumer.cancel().then(() => {
        cancelled = true;
      });
      // While cancel() waits, the queue is served by a new consumer: a message and an end marker
      // travel through the broker to it, and cancel() has still not returned.
      const next = await collect(queue, bindings);
      await bus.publish(Exchange.events, `${ns}.c`, env(2));
      await untilEnd(next, Exchange.events, `${ns}.c`);
      const cancelledEarly = cancelled;
      gate.resolve(); // before any assertion: a failure must not leave the handler held
      await cancelling;
      expect(cancelledEarly).toBe(false);
      expect(finished).toBe(true);

      // The first was acked (not redelivered to the new consumer); the second went to the new one.
      await untilEnd(next, Exchange.events, `${ns}.c`);
      expect(next.ns()).toEqual([2]);
      expect(q.ns()).toEqual([1]);
    });

    it('close() waits for in-flight handlers; afterwards publish and check reject', async () => {
      const gate = deferred();
      let finished = false;
      const q = await collect(
        queueName('q'),
        [{ exchange: Exchange.events, routingKey: `${ns}.close` }],
        {},
        async () => {
          await gate.promise;
          finished = true;
        },
      );
      await expect(bus.check()).resolves.toBeUndefined();
      await bus.publish(Exchange.events, `${ns}.close`, env(1));
      await waitFor(() => q.received.length === 1, 'the message');
      let closed = false;
      const closing = bus.close().then(() => {
        closed = true;
      });
      // While close() waits, a message makes a round trip through another bus (for AMQP: a new
      // connection to the same broker), and close() has still not returned.
      const other = await factory();
      try {
        const arrived = deferred();
        const bindings = [{ exchange: Exchange.events, routingKey: `${ns}.other` }];
        await other.consume({ queue: queueName('other'), bindings }, async () => arrived.resolve());
        await other.publish(Exchange.events, `${ns}.other`, env(END));
        await arrived.promise;
      } finally {
        await other.close();
      }
      const closedEarly = closed;
      gate.resolve();
      await closing;
      expect(closedEarly).toBe(false);
      expect(finished).toBe(true);
      await expect(bus.check()).rejects.toThrow(/closed/);
      await expect(bus.publish(Exchange.events, `${ns}.close`, env(2))).rejects.toThrow(/closed/);
    });

    describe('subscribe (transient subscriptions)', () => {
      /** Subscribes and records the payloads in arrival order; `handle` may throw. */
      async function subscribed(routingKey: string, handle: (n: number) => void = () => {}) {
        const seen: number[] = [];
        const sub = await bus.subscribe<Payload>(
          { bindings: [{ exchange: Exchange.events, routingKey }] },
          (d) => {
            seen.push(d.envelope.payload.n);
            handle(d.envelope.payload.n);
          },
        );
        consumers.push(sub);
        return { seen, sub };
      }

      it('gives every subscription every matching message, in order, beside a work queue', async () => {
        const a = await subscribed(`${ns}.sub.#`);
        const b = await subscribed(`${ns}.sub.*`);
        const work = await collect(queueName('work'), [
          { exchange: Exchange.events, routingKey: `${ns}.sub.#` },
        ]);
        await bus.publish(Exchange.events, `${ns}.other`, env(99));
        for (const n of [1, 2, 3]) await bus.publish(Exchange.events, `${ns}.sub.x`, env(n));
        await bus.publish(Exchange.events, `${ns}.sub.end`, env(END));
        await waitFor(() => a.seen.includes(END) && b.seen.includes(END), 'the end marker on both');
        expect(a.seen).toEqual([1, 2, 3, END]);
        expect(b.seen).toEqual([1, 2, 3, END]);
        await waitFor(() => work.received.length === 4, 'the work queue too');
      });

      it('drops a message whose handler throws and goes on; cancel() stops deliveries', async () => {
        const a = await subscribed(`${ns}.t.#`, (n) => {
          if (n === 1) throw new Error('boom');
        });
        const other = await subscribed(`${ns}.t.#`);
        await bus.publish(Exchange.events, `${ns}.t.k`, env(1));
        await bus.publish(Exchange.events, `${ns}.t.k`, env(2));
        await waitFor(() => a.seen.includes(2), 'the message after the failure');
        expect(a.seen).toEqual([1, 2]);
        await a.sub.cancel();
        await bus.publish(Exchange.events, `${ns}.t.k`, env(3));
        await bus.publish(Exchange.events, `${ns}.t.k`, env(END));
        await waitFor(() => other.seen.includes(END), 'the end marker on the other subscription');
        expect(a.seen).toEqual([1, 2]);
        expect(other.seen).toEqual([1, 2, 3, END]);
      });

      it('rejects invalid subscribe options with a clear message', async () => {
        await expect(bus.subscribe({ bindings: [] }, () => {})).rejects.toThrow(
          /bindings must be a non-empty/,
        );
        await expect(
          bus.subscribe(
            { bindings: [{ exchange: Exchange.events, routingKey: '#' }], maxQueued: 0 },
            () => {},
          ),
        ).rejects.toThrow(/maxQueued must be an integer/);
      });
    });

    it('rejects invalid consume options with a clear message', async () => {
      await expect(bus.consume({ queue: '', bindings: [] }, async () => {})).rejects.toThrow(
        /queue must be a non-empty string/,
      );
      await expect(
        bus.consume({ queue: queueName('q'), bindings: [], prefetch: 0 }, async () => {}),
      ).rejects.toThrow(/prefetch must be an integer/);
      await expect(
        bus.consume({ queue: `${queueName('q')}.parking`, bindings: [] }, async () => {}),
      ).rejects.toThrow(/reserved/);
    });
  });
}
