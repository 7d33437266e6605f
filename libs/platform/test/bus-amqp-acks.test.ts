/**
 * Coalesced acks (src/bus/amqp/ack-window.ts) on the real broker: messages finished in one turn
 * share one `multiple` ack, a failing or slow message in the group is settled on its own, and a
 * message whose ack was lost with its connection is delivered again (at-least-once).
 */
import { Exchange } from '@mailyard/contracts';
import { type TestVhost, createTestVhost, uniqueName } from '@mailyard/testkit/servers';
import { openAmqpBus } from '../src/bus/amqp';
import { envelope } from '../src/bus/envelope';
import type { Bus, Consumer, Delivery } from '../src/bus/types';
import { createLogger } from '../src/logger/logger';
import { deferred, waitFor } from './bus.contract';
import { closeVhostConnections, rabbitmqctl } from './rabbit-admin';

const logger = createLogger('bus-acks-test', process.env.TEST_LOG_LEVEL ?? 'error');
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const END = -1;

let vhost: TestVhost;
let bus: Bus;
const consumers: Consumer[] = [];

beforeAll(async () => {
  vhost = createTestVhost();
  bus = await openAmqpBus(vhost.url, logger, { publishTimeoutMs: 90_000, reconnectMaxMs: 1_000 });
});

afterAll(async () => {
  await Promise.all(consumers.map((c) => c.cancel()));
  await bus?.close();
  await vhost?.drop();
});

type Payload = { n: number };

async function consume(
  queue: string,
  key: string,
  prefetch: number,
  handle: (d: Delivery<Payload>) => Promise<void> | void = () => {},
) {
  const received: Delivery<Payload>[] = [];
  const consumer = await bus.consume<Payload>(
    { queue, bindings: [{ exchange: Exchange.events, routingKey: key }], prefetch, retryDelaysMs: [50] },
    async (d) => {
      received.push(d);
      await handle(d);
    },
  );
  consumers.push(consumer);
  const ns = () => received.map((d) => d.envelope.payload.n);
  return { received, consumer, ns };
}

const publish = (key: string, n: number) => bus.publish(Exchange.events, key, envelope('test.n', { n }));

/** Messages of `queue` the broker still counts as delivered and unacked. */
async function unacked(queue: string): Promise<number> {
  const out = await rabbitmqctl(
    'list_queues',
    '-p',
    vhost.name,
    'name',
    'messages_unacknowledged',
    '--formatter',
    'json',
  );
  const row = (JSON.parse(out) as Array<{ name: string; messages_unacknowledged: number }>).find(
    (r) => r.name === queue,
  );
  return row?.messages_unacknowledged ?? 0;
}

/** A new consumer of `queue` gets only the end marker: everything before it was acked. */
async function expectAllAcked(queue: string, key: string) {
  const after = await consume(queue, key, 16);
  await publish(key, END);
  await waitFor(() => after.ns().includes(END), 'end marker');
  expect(after.ns()).toEqual([END]);
}

it('acks a group finished together; the one that failed in it is retried alone and the rest are not redelivered', async () => {
  const queue = uniqueName('q');
  const key = `${uniqueName('k')}.group`;
  const gate = deferred();
  let started = 0;
  const q = await consume(queue, key, 20, async (d) => {
    started++;
    await gate.promise;
    if (d.envelope.payload.n === 7 && d.failures === 0) throw new Error('item 7 fails once');
  });
  await Promise.all(range(1, 20).map((n) => publish(key, n)));
  try {
    await waitFor(() => started === 20, 'all 20 in flight');
  } finally {
    gate.resolve();
  }
  await waitFor(
    () => q.received.some((d) => d.envelope.payload.n === 7 && d.failures === 1),
    'the retry of 7',
  );
  await waitFor(async () => (await unacked(queue)) === 0, 'no message left unacked');
  expect(q.ns().sort((a, b) => a - b)).toEqual([...range(1, 7), ...range(7, 20)]);
  await q.consumer.cancel();
  await expectAllAcked(queue, key);
});

it('a slow message does not hold back the acks of the ones after it (prefetch slots free up)', async () => {
  const queue = uniqueName('q');
  const key = `${uniqueName('k')}.slow`;
  const slow = deferred();
  const q = await consume(queue, key, 3, async (d) => {
    if (d.envelope.payload.n === 1) await slow.promise;
  });
  try {
    for (const n of range(1, 12)) await publish(key, n);
    // With prefetch 3 and message 1 still running, 2..12 pass only if their acks were sent.
    await waitFor(() => range(2, 12).every((n) => q.ns().includes(n)), 'messages 2-12 while 1 runs');
    expect(await unacked(queue)).toBe(1);
  } finally {
    slow.resolve();
  }
  await waitFor(async () => (await unacked(queue)) === 0, 'message 1 acked');
  await q.consumer.cancel();
  await expectAllAcked(queue, key);
});

it('a message handled but not acked when its connection died is delivered again; acks go on on the new channel', async () => {
  const queue = uniqueName('q');
  const key = `${uniqueName('k')}.crash`;
  let dropped = false;
  const q = await consume(queue, key, 8, async (d) => {
    if (d.envelope.payload.n === 3 && !dropped) {
      dropped = true;
      // The work of 3 is done; its ack cannot leave before the connection is gone.
      await closeVhostConnections(vhost.name);
    }
  });
  for (const n of range(1, 6)) await publish(key, n);
  await waitFor(() => q.received.some((d) => d.envelope.payload.n === 3 && d.redelivered), '3 redelivered');
  await waitFor(() => range(1, 6).every((n) => q.ns().includes(n)), 'messages 1-6');
  for (const n of range(7, 30)) await publish(key, n);
  await waitFor(() => range(7, 30).every((n) => q.ns().includes(n)), 'messages 7-30 after the reconnect');
  await waitFor(async () => (await unacked(queue)) === 0, 'no message left unacked');
  await q.consumer.cancel();
  await expectAllAcked(queue, key);
});
