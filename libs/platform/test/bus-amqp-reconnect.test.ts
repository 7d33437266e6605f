/**
 * Connection loss and a real broker restart. This file stops the shared RabbitMQ: run it
 * serially with other integration tests (jest --runInBand).
 */
import { Exchange } from '@mailyard/contracts';
import { type TestVhost, createTestVhost, uniqueName } from '@mailyard/testkit/servers';
import { openAmqpBus } from '../src/bus/amqp';
import { envelope } from '../src/bus/envelope';
import type { Bus, Consumer, Delivery } from '../src/bus/types';
import { createLogger } from '../src/logger/logger';
import { waitFor } from './bus.contract';
import { captureLogger } from './capture-logger';
import { closeVhostConnections, restartBroker } from './rabbit-admin';

const logger = createLogger('bus-reconnect-test', process.env.TEST_LOG_LEVEL ?? 'error');
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const options = { publishTimeoutMs: 90_000, reconnectMaxMs: 2_000 };

/**
 * The publisher's warnings, counted: each failed reconnect attempt is one (the restart test
 * waits for two of them while its publishes wait, rather than for a fixed time).
 */
let reconnectFailures = 0;
const publisherLogger = captureLogger((line) => {
  if (line.includes('AMQP reconnect failed')) reconnectFailures++;
}, 'warn');

let vhost: TestVhost;
let publisher: Bus;
let consumerBus: Bus;
const consumers: Consumer[] = [];

beforeAll(async () => {
  vhost = createTestVhost();
  // Two connections, as two services would have.
  publisher = await openAmqpBus(vhost.url, publisherLogger, { ...options, connectionName: 'test-publisher' });
  consumerBus = await openAmqpBus(vhost.url, logger, { ...options, connectionName: 'test-consumer' });
});

afterAll(async () => {
  await Promise.all(consumers.map((c) => c.cancel()));
  await publisher?.close();
  await consumerBus?.close();
  await vhost?.drop();
});

async function collect(queue: string, routingKey: string) {
  const seen: number[] = [];
  const deliveries: Delivery<{ n: number }>[] = [];
  const consumer = await consumerBus.consume<{ n: number }>(
    { queue, bindings: [{ exchange: Exchange.events, routingKey }], prefetch: 8 },
    async (d) => {
      deliveries.push(d);
      seen.push(d.envelope.payload.n);
    },
  );
  consumers.push(consumer);
  return {
    seen,
    deliveries,
    consumer,
    has: (ns: number[]) => {
      const got = new Set(seen);
      return ns.every((n) => got.has(n));
    },
  };
}

const isDisconnected = (bus: Bus) =>
  bus.check().then(
    () => false,
    () => true,
  );
const publish = (key: string, n: number) =>
  publisher.publish(Exchange.events, key, envelope('test.n', { n }));

it('consumer and publisher carry on after the broker closes their connections', async () => {
  const key = `${uniqueName('k')}.blip`;
  const q = await collect(uniqueName('q'), key);
  for (const n of range(1, 50)) await publish(key, n);
  await waitFor(() => q.has(range(1, 50)), 'messages 1-50');

  await closeVhostConnections(vhost.name);
  // Published right away: they wait for the reconnection instead of being lost.
  await Promise.all(range(51, 100).map((n) => publish(key, n)));
  await waitFor(() => q.has(range(1, 100)), 'messages 1-100 after the connection loss');
  await publisher.check();
  await consumerBus.check();
});

it('a publish in flight when the connection drops rejects or is delivered, never resolves silently', async () => {
  const key = `${uniqueName('k')}.burst`;
  const q = await collect(uniqueName('q'), key);
  const outcomes: Promise<{ n: number; ok: boolean }>[] = [];
  let n = 0;
  let lost: () => void = () => {};
  const loss = new Promise<void>((resolve) => {
    lost = resolve;
  });
  let lossLanded = false;
  const burst = (async () => {
    // Keep publishing, unawaited, across the connection loss: rounds of 20, each round once the
    // one before it settled (so there are publishes in flight at any moment) or the loss was
    // made, until 10 rounds went out after the loss.
    let previous: Promise<unknown> = Promise.resolve();
    for (let afterLoss = 0; afterLoss < 10; afterLoss += lossLanded ? 1 : 0) {
      const round: Promise<{ n: number; ok: boolean }>[] = [];
      for (let i = 0; i < 20; i++) {
        const id = ++n;
        round.push(
          publish(key, id).then(
            () => ({ n: id, ok: true }),
            () => ({ n: id, ok: false }),
          ),
        );
      }
      outcomes.push(...round);
      await Promise.race([previous, loss]);
      previous = Promise.all(round);
    }
  })();
  await waitFor(() => q.seen.length > 0, 'the first messages');
  await closeVhostConnections(vhost.name);
  lossLanded = true;
  lost();
  await burst;
  const results = await Promise.all(outcomes);
  const confirmed = results.filter((r) => r.ok).map((r) => r.n);
  // A publisher that rejected everything would pass the check below: some of the burst must be
  // confirmed, and publishes after the loss must go through.
  expect(confirmed.length).toBeGreaterThan(0);
  const after = range(n + 1, n + 10);
  await Promise.all(after.map((m) => publish(key, m)));
  await waitFor(() => q.has([...confirmed, ...after]), 'every confirmed message', 60_000);
  console.log(
    `connection loss during a burst: ${results.length} publishes, ${results.length - confirmed.length} rejected`,
  );
}, 120_000);

it('survives a broker restart: waiting publishes go through, queued durable messages are kept', async () => {
  const key = `${uniqueName('k')}.restart`;
  const live = await collect(uniqueName('live'), key);
  // A durable queue with no consumer through the restart.
  const storedQueue = uniqueName('stored');
  const declare = await collect(storedQueue, key);
  await declare.consumer.cancel();

  for (const n of range(1, 30)) await publish(key, n);
  await waitFor(() => live.has(range(1, 30)), 'messages 1-30 before the restart');

  let during: Promise<unknown> = Promise.resolve();
  let settledWhileDown = false;
  await restartBroker(async () => {
    await waitFor(() => isDisconnected(publisher), 'the publisher to notice', 30_000);
    await waitFor(() => isDisconnected(consumerBus), 'the consumer to notice', 30_000);
    await expect(publisher.check()).rejects.toThrow(/not connected to RabbitMQ at amqp:\/\/guest:\*\*\*@/);
    const pending = range(31, 40).map((n) => publish(key, n));
    during = Promise.all(pending);
    void Promise.race(pending).finally(() => {
      settledWhileDown = true;
    });
    // Nothing can be confirmed while the broker is down: the publishes are still waiting after
    // the publisher tried to reconnect twice more.
    const failures = reconnectFailures;
    await waitFor(() => reconnectFailures >= failures + 2, 'two failed reconnect attempts', 30_000);
    expect(settledWhileDown).toBe(false);
  });
  await during;
  for (const n of range(41, 50)) await publish(key, n);

  await waitFor(() => live.has(range(1, 50)), 'messages 1-50 on the live consumer', 60_000);
  const stored = await collect(storedQueue, key);
  await waitFor(() => stored.has(range(1, 50)), 'messages 1-50 kept in the durable queue', 60_000);
  expect([...new Set(stored.seen)].sort((a, b) => a - b)).toEqual(range(1, 50));
}, 180_000);
