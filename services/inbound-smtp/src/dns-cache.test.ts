import { cachedLookup } from './dns-cache';

const fail = (code: string) => Object.assign(new Error(code), { code });

describe('cachedLookup', () => {
  let clock = 0;
  let calls: string[] = [];
  let answers: Record<string, () => Promise<unknown>> = {};
  const lookup = cachedLookup(
    (name, rrtype) => {
      calls.push(`${rrtype} ${name}`);
      return (answers[name] ?? (() => Promise.reject(fail('ENOTFOUND'))))();
    },
    { ttlMs: 1000, maxEntries: 2, now: () => clock },
  );
  beforeEach(() => {
    clock += 1_000_000;
    calls = [];
    answers = {};
  });

  test('an answer is reused until it expires, per name (case-insensitive) and type', async () => {
    answers['a.test'] = async () => [['v=spf1 -all']];
    expect(await lookup('a.test', 'TXT')).toEqual([['v=spf1 -all']]);
    expect(await lookup('A.test', 'TXT')).toEqual([['v=spf1 -all']]);
    await lookup('a.test', 'MX');
    expect(calls).toEqual(['TXT a.test', 'MX a.test']);
    clock += 1001;
    await lookup('a.test', 'TXT');
    expect(calls).toHaveLength(3);
  });

  test('no such name and no data are kept; timeouts and SERVFAIL are not', async () => {
    for (const code of ['ENOTFOUND', 'ENODATA', 'ETIMEOUT', 'ESERVFAIL']) {
      answers[`${code}.test`] = () => Promise.reject(fail(code));
      await expect(lookup(`${code}.test`, 'TXT')).rejects.toMatchObject({ code });
      await expect(lookup(`${code}.test`, 'TXT')).rejects.toMatchObject({ code });
    }
    expect(calls).toEqual([
      'TXT ENOTFOUND.test',
      'TXT ENODATA.test',
      'TXT ETIMEOUT.test',
      'TXT ETIMEOUT.test',
      'TXT ESERVFAIL.test',
      'TXT ESERVFAIL.test',
    ]);
  });

  test('a lookup in flight is shared; the oldest name goes beyond maxEntries', async () => {
    let release: (v: unknown) => void = () => {};
    answers['slow.test'] = () =>
      new Promise((r) => {
        release = r;
      });
    const both = Promise.all([lookup('slow.test', 'TXT'), lookup('slow.test', 'TXT')]);
    release([['x']]);
    expect(await both).toEqual([[['x']], [['x']]]);
    answers['b.test'] = async () => [['b']];
    answers['c.test'] = async () => [['c']];
    await lookup('b.test', 'TXT');
    await lookup('c.test', 'TXT'); // slow.test is dropped (maxEntries 2)
    answers['slow.test'] = async () => [['y']];
    expect(await lookup('slow.test', 'TXT')).toEqual([['y']]);
    expect(calls.filter((c) => c === 'TXT slow.test')).toHaveLength(2);
  });
});
