import { SealError, Sealer, generateSecretKey, parseSecretKey } from './sealer';

describe('Sealer', () => {
  const sealer = new Sealer(parseSecretKey(generateSecretKey()));

  it('round-trips and never contains the plaintext', () => {
    const sealed = sealer.seal('hunter2-password');
    expect(sealed.toString('latin1')).not.toContain('hunter2');
    expect(sealer.openText(sealed)).toBe('hunter2-password');
    expect(sealer.seal('x').equals(sealer.seal('x'))).toBe(false);
  });

  it('tells a wrong key from tampering', () => {
    const sealed = sealer.seal('secret');
    const other = new Sealer(parseSecretKey(generateSecretKey()));
    expect(() => other.open(sealed)).toThrow('sealed with a different SECRET_KEY');
    const tampered = Buffer.from(sealed);
    tampered[tampered.length - 1]! ^= 1;
    expect(() => sealer.open(tampered)).toThrow('sealed value failed authentication');
    expect(() => sealer.open(Buffer.from('nope'))).toThrow(SealError);
  });

  it('accepts hex and base64 keys of 32 bytes only', () => {
    expect(parseSecretKey('a'.repeat(64))).toHaveLength(32);
    expect(parseSecretKey(Buffer.alloc(32, 7).toString('base64'))).toHaveLength(32);
    expect(() => parseSecretKey('short')).toThrow(/32 bytes/);
  });
});
