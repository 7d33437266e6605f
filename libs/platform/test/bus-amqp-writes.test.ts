import { type TestVhost, createTestVhost } from '@mailyard/testkit/servers';
import amqp from 'amqplib';
import { coalesceFrameWrites } from '../src/bus/amqp/coalesce-writes';

let vhost: TestVhost;

beforeAll(() => {
  vhost = createTestVhost();
});

afterAll(async () => {
  await vhost?.drop();
});

interface SocketCalls {
  writes: number;
  chunks: number;
}

/** Counts the socket's own writes (`_write` one chunk, `_writev` several: one system call each). */
function spySocket(model: amqp.ChannelModel): SocketCalls {
  const socket = (model as unknown as { connection: { stream: NodeJS.WritableStream } }).connection
    .stream as unknown as {
    _write: (...a: unknown[]) => unknown;
    _writev: (chunks: unknown[], ...a: unknown[]) => unknown;
  };
  const calls = { writes: 0, chunks: 0 };
  const write = socket._write;
  const writev = socket._writev;
  socket._write = function (this: unknown, ...a: unknown[]) {
    calls.writes++;
    calls.chunks++;
    return write.apply(this, a);
  };
  socket._writev = function (this: unknown, chunks: unknown[], ...a: unknown[]) {
    calls.writes++;
    calls.chunks += chunks.length;
    return writev.call(this, chunks, ...a);
  };
  return calls;
}

/** Publishes `n` messages in one turn on a confirm channel; the socket calls they took. */
async function publishBatch(
  coalesce: boolean,
  n: number,
): Promise<{ calls: SocketCalls; received: string[] }> {
  const model = await amqp.connect(vhost.url);
  try {
    if (coalesce) expect(coalesceFrameWrites(model)).toBe(true);
    const ch = await model.createConfirmChannel();
    const { queue } = await ch.assertQueue('', { exclusive: true });
    const calls = spySocket(model);
    await Promise.all(
      Array.from(
        { length: n },
        (_, i) =>
          new Promise<void>((resolve, reject) =>
            ch.sendToQueue(queue, Buffer.from(`message ${i}`), { persistent: true }, (err) =>
              err ? reject(err) : resolve(),
            ),
          ),
      ),
    );
    const seen = { ...calls };
    const received: string[] = [];
    for (;;) {
      const msg = await ch.get(queue, { noAck: true });
      if (!msg) break;
      received.push(msg.content.toString());
    }
    return { calls: seen, received };
  } finally {
    await model.close();
  }
}

describe('coalesceFrameWrites', () => {
  const expected = Array.from({ length: 20 }, (_, i) => `message ${i}`);

  it('sends the frames of messages published in one turn in one socket write, in order', async () => {
    const { calls, received } = await publishBatch(true, 20);
    expect(calls.chunks).toBeGreaterThanOrEqual(20);
    expect(calls.writes).toBeLessThanOrEqual(2);
    expect(received).toEqual(expected);
  });

  it('(amqplib alone writes them one by one)', async () => {
    const { calls, received } = await publishBatch(false, 20);
    expect(calls.writes).toBeGreaterThanOrEqual(20);
    expect(received).toEqual(expected);
  });

  it('keeps back-pressure: a batch larger than the socket buffer is delivered whole and in order', async () => {
    const model = await amqp.connect(vhost.url);
    try {
      coalesceFrameWrites(model);
      const ch = await model.createConfirmChannel();
      const { queue } = await ch.assertQueue('', { exclusive: true });
      const body = Buffer.alloc(8 * 1024, 'x');
      const n = 200; // 1.6 MB: many times the socket's 16 KB high-water mark
      await Promise.all(
        Array.from(
          { length: n },
          (_, i) =>
            new Promise<void>((resolve, reject) =>
              ch.sendToQueue(queue, Buffer.concat([Buffer.from(`${i}:`), body]), {}, (err) =>
                err ? reject(err) : resolve(),
              ),
            ),
        ),
      );
      const order: number[] = [];
      for (;;) {
        const msg = await ch.get(queue, { noAck: true });
        if (!msg) break;
        const text = msg.content.toString();
        order.push(Number(text.slice(0, text.indexOf(':'))));
        expect(msg.content.length).toBe(text.indexOf(':') + 1 + body.length);
      }
      expect(order).toEqual(Array.from({ length: n }, (_, i) => i));
    } finally {
      await model.close();
    }
  });
});
