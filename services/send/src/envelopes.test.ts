import { randomBytes } from 'node:crypto';
import { parseServiceAddress, verpNamesRecipient } from '@mailyard/platform';
import { envelopesFor } from './envelopes';

const rp = { key: randomBytes(32), bounceDomain: 'bounces.mailyard.test' };
const COPY = '01JB8W7Y3K5Q9M2N4P6R8T0V1X.2';

describe('envelopesFor', () => {
  it('domain mailers: one envelope per recipient, each with its own signed VERP sender', () => {
    const envs = envelopesFor({ kind: 'domain' }, COPY, 'news@brand.test', ['a@x.test', 'B@y.test'], rp);
    expect(envs.map((e) => e.to)).toEqual([['a@x.test'], ['B@y.test']]);
    for (const e of envs) {
      const [local, domain] = e.from.split('@');
      expect(domain).toBe('bounces.mailyard.test');
      const parsed = parseServiceAddress(local!);
      if (parsed?.kind !== 'bounce') throw new Error(`not a VERP address: ${e.from}`);
      expect(parsed.copyId).toBe(COPY);
      expect(verpNamesRecipient(rp.key, parsed, e.to[0]!)).toBe(true);
      const other = e.to[0] === 'a@x.test' ? 'B@y.test' : 'a@x.test';
      expect(verpNamesRecipient(rp.key, parsed, other)).toBe(false);
    }
  });

  it('the same address twice (any case) is delivered once', () => {
    const envs = envelopesFor({ kind: 'domain' }, COPY, 'n@b.test', ['a@x.test', 'A@X.test'], rp);
    expect(envs).toHaveLength(1);
  });

  it('SMTP mailers keep the From address as sender, all recipients in one transaction', () => {
    expect(envelopesFor({ kind: 'smtp' }, COPY, 'me@own.test', ['a@x.test', 'b@y.test'], rp)).toEqual([
      { from: 'me@own.test', to: ['a@x.test', 'b@y.test'] },
    ]);
  });

  it('no recipients, no envelope', () => {
    expect(envelopesFor({ kind: 'domain' }, COPY, 'n@b.test', [], rp)).toEqual([]);
  });
});
