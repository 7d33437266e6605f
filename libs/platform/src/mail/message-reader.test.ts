import { PassThrough, Readable } from 'node:stream';
import { ByteBudget } from './byte-budget';
import { readMessage } from './message-reader';

const chunks = (n: number, size: number) =>
  Array.from({ length: n }, (_, i) => Buffer.alloc(size, 97 + (i % 26)));

describe('readMessage', () => {
  test('a message within the limits is held whole and its bytes are reserved until release()', async () => {
    const budget = new ByteBudget(1000);
    const out = await readMessage(Readable.from(chunks(3, 100)), 300, budget);
    expect(out.kind).toBe('message');
    if (out.kind !== 'message') return;
    expect(out.raw.toString()).toBe(`${'a'.repeat(100)}${'b'.repeat(100)}${'c'.repeat(100)}`);
    expect(budget.held).toBe(300);
    out.release();
    out.release(); // once only
    expect(budget.held).toBe(0);
  });

  test('past maxBytes: nothing more is held, what was held is given back, the rest is read to the end', async () => {
    const budget = new ByteBudget(10_000);
    const stream = Readable.from(chunks(50, 100));
    let heldWhileReading = 0;
    stream.on('data', () => {
      heldWhileReading = Math.max(heldWhileReading, budget.held);
    });
    const out = await readMessage(stream, 250, budget);
    expect(out).toEqual({ kind: 'too-big', bytes: 5000 });
    expect(stream.readableEnded).toBe(true);
    expect(budget.held).toBe(0);
    expect(budget.peak).toBeLessThanOrEqual(250);
    expect(heldWhileReading).toBeLessThanOrEqual(250);
  });

  test('a chunk the shared budget cannot take: no-budget, nothing held, read to the end', async () => {
    const budget = new ByteBudget(250);
    expect(budget.tryReserve(100)).toBe(true); // another session's message
    const out = await readMessage(Readable.from(chunks(3, 100)), 1000, budget);
    expect(out).toEqual({ kind: 'no-budget', bytes: 300 });
    expect(budget.held).toBe(100);
  });

  test('a stream that fails gives its reservation back and rejects', async () => {
    const budget = new ByteBudget(1000);
    const stream = new PassThrough();
    const reading = readMessage(stream, 1000, budget);
    stream.write(Buffer.alloc(200));
    await new Promise((r) => setImmediate(r));
    expect(budget.held).toBe(200);
    stream.destroy(new Error('connection closed'));
    await expect(reading).rejects.toThrow('connection closed');
    expect(budget.held).toBe(0);
  });
});
