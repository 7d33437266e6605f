import { hostRefusal, isPrivateAddress } from './host-policy';

describe('host policy', () => {
  it.each([
    '127.0.0.1',
    '10.1.2.3',
    '172.20.0.1',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '::1',
    'fd00::1',
    'fe80::1',
    '::ffff:127.0.0.1',
    'not-an-ip',
  ])('treats %s as private', (ip) => {
    expect(isPrivateAddress(ip)).toBe(true);
  });

  it.each(['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8'])(
    'treats %s as public',
    (ip) => {
      expect(isPrivateAddress(ip)).toBe(false);
    },
  );

  it('refuses hosts resolving to private addresses unless allowed', async () => {
    expect(await hostRefusal('localhost', false)).toMatch(/^localhost resolves to a private/);
    expect(await hostRefusal('127.0.0.1', false)).toMatch(/private/);
    expect(await hostRefusal('127.0.0.1', true)).toBeNull();
    expect(await hostRefusal('8.8.8.8', false)).toBeNull();
  });

  it('leaves hosts that do not resolve to the connection attempt (no refusal)', async () => {
    expect(await hostRefusal('no-such-host.invalid', false)).toBeNull();
  });
});
