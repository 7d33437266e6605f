import { clientKey } from './client-key';

describe('clientKey (per-IP connection limit)', () => {
  test('an IPv4 address is its own key', () => {
    expect(clientKey('192.0.2.1')).toBe('192.0.2.1');
    expect(clientKey('192.0.2.2')).not.toBe(clientKey('192.0.2.1'));
  });

  test.each([
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:db8:1:2::7', '2001:db8:1:2::/64'],
    ['2001:DB8:1:2:ffff::', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['2001:db8::1:2:3:4', '2001:db8:0:0::/64'],
    ['2001:db8::9:1:2:3:4', '2001:db8:0:9::/64'],
    ['2001:db8:0:0:1::', '2001:db8:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['::', '0:0:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['64:ff9b::192.0.2.1', '64:ff9b:0:0::/64'],
    ['2001:db8:1:2:3:4:192.0.2.1', '2001:db8:1:2::/64'],
    ['2001:0db8:0001:0002::1', '2001:db8:1:2::/64'],
  ])('IPv6 %s counts as %s', (ip, key) => {
    expect(clientKey(ip)).toBe(key);
  });

  test('two addresses of one /64 share a key, neighbouring /64s do not', () => {
    expect(clientKey('2001:db8:1:2::a')).toBe(clientKey('2001:db8:1:2:ffff:ffff:ffff:ffff'));
    expect(clientKey('2001:db8:1:3::a')).not.toBe(clientKey('2001:db8:1:2::a'));
  });
});
