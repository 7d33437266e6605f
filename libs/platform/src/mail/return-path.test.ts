import { randomBytes } from 'node:crypto';
import { Sealer } from '../secrets/sealer';
import {
  parseServiceAddress,
  refIdOfCopy,
  returnPathKey,
  unsubscribeAddress,
  unsubscribeTagValid,
  verpAddress,
  verpNamesRecipient,
} from './return-path';

const key = randomBytes(32);
const REF = '01JB8W7Y3K5Q9M2N4P6R8T0V1X';
const COPY = `${REF}.3`;
const LOG = '01JB8W7Y3K5Q9M2N4P6R8T0V2Z';

const local = (address: string) => address.slice(0, address.lastIndexOf('@'));

describe('VERP return path', () => {
  it('encodes copy and recipient in a local part of at most 64 characters', () => {
    const a = verpAddress(key, COPY, 'Reader@Example.com', 'bounces.mailyard.test');
    expect(a).toMatch(new RegExp(`^bounce\\+${REF}\\.3\\.[a-z2-7]{16}@bounces\\.mailyard\\.test$`));
    expect(local(a).length).toBeLessThanOrEqual(64);
    expect(local(verpAddress(key, `${REF}.999999`, 'x@y.z', 'd.test')).length).toBeLessThanOrEqual(64);
  });

  it('verifies the recipient it was made for, whatever the case of the address', () => {
    const a = verpAddress(key, COPY, 'reader@example.com', 'b.test');
    const parsed = parseServiceAddress(local(a));
    expect(parsed).toEqual({ kind: 'bounce', copyId: COPY, tag: expect.any(String) });
    if (parsed?.kind !== 'bounce') throw new Error('not parsed');
    expect(verpNamesRecipient(key, parsed, 'READER@example.com')).toBe(true);
    const lowered = parseServiceAddress(local(a).toLowerCase());
    const upper = parseServiceAddress(local(a).toUpperCase());
    for (const p of [lowered, upper]) {
      if (p?.kind !== 'bounce') throw new Error('not parsed');
      expect(p.copyId).toBe(COPY);
      expect(verpNamesRecipient(key, p, 'reader@example.com')).toBe(true);
    }
  });

  it('does not verify for another recipient, copy or key (a forged bounce names nothing)', () => {
    const parsed = parseServiceAddress(local(verpAddress(key, COPY, 'reader@example.com', 'b.test')));
    if (parsed?.kind !== 'bounce') throw new Error('not parsed');
    expect(verpNamesRecipient(key, parsed, 'other@example.com')).toBe(false);
    expect(verpNamesRecipient(key, { ...parsed, copyId: `${REF}.4` }, 'reader@example.com')).toBe(false);
    expect(verpNamesRecipient(randomBytes(32), parsed, 'reader@example.com')).toBe(false);
    const flipped = parsed.tag.startsWith('a') ? `b${parsed.tag.slice(1)}` : `a${parsed.tag.slice(1)}`;
    expect(verpNamesRecipient(key, { ...parsed, tag: flipped }, 'reader@example.com')).toBe(false);
  });

  it('the same key comes from the same SECRET_KEY (send and inbound replicas agree)', () => {
    const secret = randomBytes(32);
    const a = returnPathKey(new Sealer(secret));
    expect(a.equals(returnPathKey(new Sealer(Buffer.from(secret))))).toBe(true);
    expect(a.equals(returnPathKey(new Sealer(randomBytes(32))))).toBe(false);
  });

  it('refIdOfCopy', () => {
    expect(refIdOfCopy(COPY)).toBe(REF);
  });
});

describe('mailto unsubscribe address', () => {
  it('round-trips and is signed', () => {
    const a = unsubscribeAddress(key, LOG, 'b.test');
    expect(a).toMatch(new RegExp(`^unsubscribe\\+${LOG}\\.[a-z2-7]{16}@b\\.test$`));
    expect(local(a).length).toBeLessThanOrEqual(64);
    const p = parseServiceAddress(local(a).toLowerCase());
    if (p?.kind !== 'unsubscribe') throw new Error('not parsed');
    expect(p.logId).toBe(LOG);
    expect(unsubscribeTagValid(key, p)).toBe(true);
    expect(unsubscribeTagValid(randomBytes(32), p)).toBe(false);
    expect(unsubscribeTagValid(key, { ...p, logId: REF })).toBe(false);
  });

  it('a bounce tag is not an unsubscribe tag (kinds are separated)', () => {
    const p = parseServiceAddress(local(verpAddress(key, `${LOG}.1`, 'x@y.test', 'b.test')));
    if (p?.kind !== 'bounce') throw new Error('not parsed');
    expect(unsubscribeTagValid(key, { logId: LOG, tag: p.tag })).toBe(false);
  });
});

describe('parseServiceAddress refuses anything else', () => {
  it.each([
    'bounce',
    'postmaster',
    'bounce+',
    `bounce+${COPY}`,
    `bounce+${REF}.abcdefghijklmnop`,
    `bounce+${COPY}.abcdefghijklmno`,
    `bounce+${COPY}.abcdefghijklmnopq`,
    `bounce+${COPY}.abcdefghijklmno1`,
    `bounce+${REF}.0.abcdefghijklmnop`,
    `bounce+${REF}x.1.abcdefghijklmnop`,
    `bouncer+${COPY}.abcdefghijklmnop`,
    `unsubscribe+${COPY}.abcdefghijklmnop`,
    `unsubscribe+${LOG}`,
    `unsubscribe+${LOG}.${'a'.repeat(40)}`,
    `${'a'.repeat(65)}`,
  ])('%s', (l) => {
    expect(parseServiceAddress(l)).toBeNull();
  });
});
