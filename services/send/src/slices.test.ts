import { Readable } from 'node:stream';
import { sliced } from './slices';

describe('sliced', () => {
  it('hands a small buffer over as is', () => {
    const b = Buffer.from('small');
    expect(sliced(b)).toBe(b);
  });

  it('streams a large buffer in slices, in order, yielding to other work between them', async () => {
    const b = Buffer.from('0123456789'.repeat(10));
    const s = sliced(b, 16);
    expect(s).toBeInstanceOf(Readable);
    const order: string[] = [];
    setImmediate(() => order.push('other work'));
    const chunks: Buffer[] = [];
    for await (const c of s as Readable) {
      chunks.push(c as Buffer);
      order.push('slice');
    }
    expect(Buffer.concat(chunks).equals(b)).toBe(true);
    expect(chunks.map((c) => c.length)).toEqual([16, 16, 16, 16, 16, 16, 4]);
    expect(order.indexOf('other work')).toBeGreaterThan(0);
    expect(order.indexOf('other work')).toBeLessThan(order.length - 1);
  });
});
