import { execFileSync } from 'node:child_process';
import { Exchange } from '@mailyard/contracts';
import { type TestVhost, createTestVhost, uniqueName } from '@mailyard/testkit/servers';
import amqp from 'amqplib';
import { openAmqpBus, safeUrl } from '../src/bus/amqp';
import { envelope } from '../src/bus/envelope';
import type { Bus, Consumer } from '../src/bus/types';
import { createLogger } from '../src/logger/logger';
import { describeBusContract, waitFor } from './bus.contract';
import { captureLogger } from './capture-logger';

const logger = createLogger('bus-amqp-test', process.env.TEST_LOG_LEVEL ?? 'error');
let vhost: TestVhost;

beforeAll(() => {
  vhost = createTestVhost();
});

afterAll(async () => {
  await vhost?.drop();
});

describeBusContract('amqp', () => openAmqpBus(vhost.url, logger));

function rabbitList(command: string, columns: string[], vhostName = vhost.name): Record<string, unknown>[] {
  const out = execFileSync('rabbitmqctl', [
    '-q',
    command,
    '-p',
    vhostName,
    ...columns,
    '--formatter',
    'json',
  ]);
  return JSON.parse(out.toString()) as Record<string, unknown>[];
}

describe('AMQP bus specifics', () => {
  let bus: Bus;
  let raw: amqp.ChannelModel;
  let ch: amqp.Channel;
  const consumers: Consumer[] = [];

  beforeAll(async () => {
    bus = await openAmqpBus(vhost.url, logger);
    raw = await amqp.connect(vhost.url);
    ch = await raw.createChannel();
  });

  afterAll(async () => {
    await Promise.all(consumers.map((c) => c.cancel()));
    await bus?.close();
    await raw?.close();
  });

  it('publishes persistent JSON messages with id, type and traceparent, after declaring durable topic exchanges', async () => {
    for (const name of [Exchange.commands, Exchange.events]) await ch.checkExchange(name);
    const exchanges = rabbitList('list_exchanges', ['name', 'type', 'durable']);
    expect(exchanges).toContainEqual({ name: Exchange.commands, type: 'topic', durable: true });
    expect(exchanges).toContainEqual({ name: Exchange.events, type: 'topic', durable: true });

    const { queue } = await ch.assertQueue('', { exclusive: true });
    const key = `${uniqueName('wire')}.email.sent`;
    await ch.bindQueue(queue, Exchange.events, key);
    const message = envelope('email.sent', { ok: true });
    await bus.publish(Exchange.events, key, message);

    let got: amqp.GetMessage | false = false;
    await waitFor(async () => {
      got = await ch.get(queue, { noAck: true });
      return got !== false;
    }, 'the published message');
    const msg = got as unknown as amqp.GetMessage;
    expect(msg.properties.deliveryMode).toBe(2);
    expect(msg.properties.contentType).toBe('application/json');
    expect(msg.properties.messageId).toBe(message.id);
    expect(msg.properties.type).toBe('email.sent');
    expect(msg.properties.headers?.traceparent).toBe(message.traceparent);
    expect(JSON.parse(msg.content.toString())).toEqual(message);
  });

  it('parks a body that is not JSON, keeping the raw text and the message id', async () => {
    const queue = uniqueName('q');
    const received: unknown[] = [];
    consumers.push(
      await bus.consume({ queue, bindings: [] }, async (d) => {
        received.push(d);
      }),
    );
    ch.sendToQueue(queue, Buffer.from('{"truncated": '), { messageId: 'msg-123', persistent: true });
    await waitFor(async () => (await bus.parked(queue)).length === 1, 'the parked message');
    const [parked] = await bus.parked(queue, true);
    expect(parked!.reason).toMatch(/^invalid message: body is not JSON/);
    expect(parked!.raw).toBe('{"truncated": ');
    expect(parked!.envelope).toMatchObject({ id: 'msg-123', type: 'invalid', payload: '{"truncated": ' });
    expect(received).toEqual([]);
  });

  it('declares durable work, parking and TTL delay queues that dead-letter back to the work queue', async () => {
    const queue = uniqueName('q');
    let attempts = 0;
    consumers.push(
      await bus.consume({ queue, bindings: [], retryDelaysMs: [60] }, async () => {
        attempts++;
        throw new Error('always');
      }),
    );
    await bus.publishDelayed(queue, envelope('x', {}), 0);
    await waitFor(async () => (await bus.parked(queue)).length === 1, 'the parked message');
    expect(attempts).toBe(2);
    const queues = rabbitList('list_queues', ['name', 'durable', 'arguments']);
    const args = (name: string) => {
      const q = queues.find((x) => x.name === name);
      if (!q) throw new Error(`queue ${name} was not declared`);
      expect(q.durable).toBe(true);
      return Object.fromEntries((q.arguments as [string, string, unknown][]).map(([k, , v]) => [k, v]));
    };
    expect(args(queue)).toEqual({});
    expect(args(`${queue}.parking`)).toEqual({});
    const deadLetterBack = { 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': queue };
    expect(args(`${queue}.delay.60`)).toEqual({ 'x-message-ttl': 60, ...deadLetterBack });
    expect(args(`${queue}.delay.0`)).toEqual({ 'x-message-ttl': 0, ...deadLetterBack });
  });

  it('re-declares and resumes a consumer whose queue was deleted under it', async () => {
    const queue = uniqueName('q');
    const key = `${queue}.k`;
    const seen: number[] = [];
    consumers.push(
      await bus.consume<{ n: number }>(
        { queue, bindings: [{ exchange: Exchange.events, routingKey: key }] },
        async (d) => {
          seen.push(d.envelope.payload.n);
        },
      ),
    );
    await bus.publish(Exchange.events, key, envelope('x', { n: 1 }));
    await waitFor(() => seen.includes(1), 'the first message');
    await ch.deleteQueue(queue);
    // Messages published before the queue is back are unroutable; keep publishing (one per poll)
    // until one lands.
    let n = 1;
    await waitFor(async () => {
      if (seen.length > 1) return true;
      await bus.publish(Exchange.events, key, envelope('x', { n: ++n }));
      return false;
    }, 'a delivery after the queue was re-declared');
    await bus.check();
  });

  it('subscribe: an exclusive auto-delete queue, declared again after the connection drops, gone on cancel', async () => {
    // Its own vhost, so closing "the bus's connections" closes no one else's.
    const own = createTestVhost();
    const sbus = await openAmqpBus(own.url, logger);
    try {
      const key = uniqueName('live');
      const seen: number[] = [];
      const sub = await sbus.subscribe<{ n: number }>(
        { bindings: [{ exchange: Exchange.events, routingKey: key }], maxQueued: 50 },
        (d) => {
          seen.push(d.envelope.payload.n);
        },
      );
      const queues = rabbitList('list_queues', ['name', 'durable', 'auto_delete', 'exclusive'], own.name);
      expect(queues).toEqual([
        expect.objectContaining({ durable: false, auto_delete: true, exclusive: true }),
      ]);
      await sbus.publish(Exchange.events, key, envelope('x', { n: 1 }));
      await waitFor(() => seen.includes(1), 'the first message');

      execFileSync('rabbitmqctl', ['-q', 'close_all_connections', '-p', own.name, 'subscription test']);
      // Published while the queue is gone, messages are unroutable: keep publishing until one lands.
      let n = 1;
      await waitFor(
        async () => {
          if (seen.length > 1) return true;
          await sbus.publish(Exchange.events, key, envelope('x', { n: ++n })).catch(() => {});
          return false;
        },
        'a message after the reconnect',
        60_000,
      );
      await sub.cancel();
      await waitFor(() => rabbitList('list_queues', ['name'], own.name).length === 0, 'the queue deleted');
    } finally {
      await sbus.close();
      await own.drop();
    }
  });

  it('never logs the password and says where it could not connect', async () => {
    const lines: string[] = [];
    const capture = captureLogger((line) => lines.push(line));
    const good = await openAmqpBus(vhost.url, capture);
    await good.close();
    expect(lines.join('\n')).toContain('guest:***@127.0.0.1');

    const badPassword = vhost.url.replace('guest:guest@', 'guest:s3cr3t-pass@');
    const refused = openAmqpBus(badPassword, capture, { connectTimeoutMs: 10_000 });
    await expect(refused).rejects.toThrow(
      /^Could not connect to RabbitMQ at amqp:\/\/guest:\*\*\*@127\.0\.0\.1:5672\/.*ACCESS/,
    );
    await refused.catch((err: Error) => expect(err.message).not.toContain('s3cr3t'));

    const nowhere = openAmqpBus('amqp://guest:guest@127.0.0.1:1/', capture, { connectTimeoutMs: 300 });
    await expect(nowhere).rejects.toThrow(
      /Could not connect to RabbitMQ at amqp:\/\/guest:\*\*\*@127\.0\.0\.1:1\/: .*ECONNREFUSED/,
    );
    expect(lines.join('\n')).not.toMatch(/guest:guest|s3cr3t/);
    expect(safeUrl('amqps://u:p%40ss@host:5671/vh?heartbeat=5')).toBe(
      'amqps://u:***@host:5671/vh?heartbeat=5',
    );
  });
});
