import { ReplayBuffer } from './replay-buffer';

const e = (id: string, tenantId = 't1') => ({ id, tenantId });

describe('ReplayBuffer', () => {
  it('returns the tenant entries after an id, oldest first', () => {
    const b = new ReplayBuffer(10);
    for (const x of [e('a'), e('b', 't2'), e('c'), e('d')]) b.push(x);
    expect(b.after('a', 't1')?.map((x) => x.id)).toEqual(['c', 'd']);
    expect(b.after('d', 't1')).toEqual([]);
    expect(b.after('zz', 't1')).toBeNull();
  });

  it("treats another tenant's id as unknown", () => {
    const b = new ReplayBuffer(10);
    b.push(e('a', 't2'));
    b.push(e('b'));
    expect(b.after('a', 't1')).toBeNull();
  });

  it('forgets what was overwritten and stays bounded', () => {
    const b = new ReplayBuffer(3);
    for (const id of ['a', 'b', 'c', 'd', 'e']) b.push(e(id));
    expect(b.after('b', 't1')).toBeNull();
    expect(b.after('c', 't1')?.map((x) => x.id)).toEqual(['d', 'e']);
    b.clear();
    expect(b.after('d', 't1')).toBeNull();
  });

  it('keeps nothing with capacity 0', () => {
    const b = new ReplayBuffer(0);
    b.push(e('a'));
    expect(b.after('a', 't1')).toBeNull();
  });
});
