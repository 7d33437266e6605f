import { ByteBudget } from '@mailyard/platform';
import { boundedWork } from './bounded-work';

describe('boundedWork with a byte budget (the in-process messages, INBOUND_MAX_INFLIGHT_BYTES)', () => {
  test('an item the budget cannot take is refused; its bytes come back when work settles, failed or not', async () => {
    const budget = new ByteBudget(100);
    const finish: Array<(fail: boolean) => void> = [];
    const errors: string[] = [];
    const work = boundedWork(
      10,
      (_n: number) =>
        new Promise<void>((resolve, reject) =>
          finish.push((fail) => (fail ? reject(new Error('x')) : resolve())),
        ),
      (n, err) => errors.push(`${n}:${err.message}`),
      { budget, weigh: (n) => n },
    );
    expect(work.offer(60)).toBe(true);
    expect(work.offer(41)).toBe(false); // 101 bytes
    expect(work.offer(40)).toBe(true);
    expect([work.inWork, budget.held]).toEqual([2, 100]);
    await new Promise((r) => setImmediate(r));
    finish[0]!(true);
    await new Promise((r) => setImmediate(r));
    expect([work.inWork, budget.held]).toEqual([1, 40]);
    expect(errors).toEqual(['60:x']);
    expect(work.offer(60)).toBe(true);
    finish[1]!(false);
    await new Promise((r) => setImmediate(r));
    expect(budget.held).toBe(60);
  });

  test('the count limit still applies first; without a budget only the count', () => {
    const budget = new ByteBudget(1000);
    const never = () => new Promise<void>(() => {});
    const capped = boundedWork(1, never, () => {}, { budget, weigh: () => 10 });
    expect(capped.offer(1)).toBe(true);
    expect(capped.offer(2)).toBe(false);
    expect(budget.held).toBe(10);
    const counted = boundedWork(2, never, () => {});
    expect([counted.offer(1), counted.offer(2), counted.offer(3)]).toEqual([true, true, false]);
  });
});
