import { isPrivateAddress } from './address-policy';

/** Each refused form beside a public address in the same form, which must stay allowed. */
const EMBEDDED: ReadonlyArray<readonly [form: string, refused: string, allowed: string]> = [
  ['IPv4-mapped, dotted', '::ffff:127.0.0.1', '::ffff:8.8.8.8'],
  ['IPv4-mapped, hex', '::ffff:7f00:1', '::ffff:808:808'],
  ['IPv4-mapped, full', '0:0:0:0:0:ffff:7f00:1', '0:0:0:0:0:ffff:808:808'],
  [
    'IPv4-mapped, zero-padded',
    '0000:0000:0000:0000:0000:ffff:0a00:0001',
    '0000:0000:0000:0000:0000:ffff:0808:0808',
  ],
  ['IPv4-mapped, upper case', '::FFFF:A9FE:A9FE', '::FFFF:808:808'],
  ['IPv4-mapped, full dotted', '0:0:0:0:0:ffff:169.254.169.254', '0:0:0:0:0:ffff:1.1.1.1'],
  ['IPv4-compatible, dotted', '::127.0.0.1', '::8.8.8.8'],
  ['IPv4-compatible, hex', '::a00:1', '::808:808'],
  ['IPv4-compatible, full', '0:0:0:0:0:0:c0a8:101', '0:0:0:0:0:0:808:808'],
  ['SIIT, dotted', '::ffff:0:127.0.0.1', '::ffff:0:8.8.8.8'],
  ['SIIT, hex', '::ffff:0:7f00:1', '::ffff:0:808:808'],
  ['SIIT, full upper case', '0:0:0:0:FFFF:0:A9FE:A9FE', '0:0:0:0:FFFF:0:808:808'],
  ['NAT64, dotted', '64:ff9b::10.0.0.1', '64:ff9b::8.8.8.8'],
  ['NAT64, hex', '64:ff9b::a9fe:a9fe', '64:ff9b::808:808'],
  ['NAT64, dotted, third octet', '64:ff9b::192.0.2.1', '64:ff9b::192.0.3.1'],
  ['NAT64, dotted, Azure WireServer', '64:ff9b::168.63.129.16', '64:ff9b::168.63.129.17'],
  ['NAT64, full upper case', '64:FF9B:0:0:0:0:7F00:1', '64:FF9B:0:0:0:0:808:808'],
  ['6to4', '2002:7f00:1::1', '2002:808:808::1'],
  ['6to4, metadata', '2002:a9fe:a9fe::', '2002:101:101::'],
  ['6to4, upper case', '2002:C0A8:101:0:0:0:0:1', '2002:808:808:0:0:0:0:1'],
  ['ISATAP, private id, dotted', '2a00:1450:4001:1::5efe:127.0.0.1', '2a00:1450:4001:1::5efe:8.8.8.8'],
  ['ISATAP, global id, hex', '2a00:1450:4001:1:200:5efe:a00:1', '2a00:1450:4001:1:200:5efe:808:808'],
  ['ISATAP, no prefix', '::5efe:169.254.169.254', '::5efe:8.8.8.8'],
];

describe('address policy', () => {
  it.each([
    '127.0.0.1',
    '127.255.255.254',
    '10.1.2.3',
    '172.20.0.1',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '100.100.100.200',
    '192.0.0.192',
    '168.63.129.16',
    '0.0.0.0',
    '192.0.2.1',
    '192.88.99.1',
    '198.18.0.1',
    '198.51.100.1',
    '203.0.113.1',
    '224.0.0.1',
    '255.255.255.255',
    '::',
    '::1',
    '0:0:0:0:0:0:0:1',
    '100::1',
    'fd00::1',
    'fd00:ec2::254',
    'FD00:EC2::254',
    'fe80::1',
    'fec0::1',
    'ff02::1',
    '2001:db8::1',
    // Teredo: server 65.54.227.120, client 127.0.0.1 obfuscated (every bit flipped)
    '2001:0:4136:e378:8000:63bf:80ff:fffe',
    // Teredo with a public client: the whole range is refused
    '2001:0:4136:e378:8000:63bf:f7f7:f7f7',
    // local-use NAT64, even carrying a public address
    '64:ff9b:1::808:808',
    '64:ff9b:1::8.8.8.8',
    // zone ids: link-local, and any other address with one
    'fe80::1%eth0',
    'fe80::1%25eth0',
    '2606:4700:4700::1111%1',
    '::ffff:8.8.8.8%eth0',
    // brackets belong to host names (guarded-resolve.ts removes them)
    '[::1]',
    '[2606:4700:4700::1111]',
    // not IP addresses, or not in the form the system reads
    'not-an-ip',
    '',
    '127.1',
    '0177.0.0.1',
    '::ffff:0127.0.0.1',
  ])('refuses %s', (ip) => {
    expect(isPrivateAddress(ip)).toBe(true);
  });

  it.each(EMBEDDED)('%s: refuses %s, allows %s', (_form, refused, allowed) => {
    expect(isPrivateAddress(refused)).toBe(true);
    expect(isPrivateAddress(allowed)).toBe(false);
  });

  it.each([
    '93.184.216.34',
    '8.8.8.8',
    '1.1.1.1',
    '100.63.255.255',
    '100.128.0.1',
    '172.32.0.1',
    '2606:4700:4700::1111',
    '2A00:1450:4001:80B::200E',
    '2001:4860:4860::8888',
    '2001:200::1',
    // an interface id like ISATAP's but with other bits set, or the IPv4 words elsewhere
    '2a00:1450:4001:1:100:5efe:7f00:1',
    '2a00:1450:4001:1:0:5eff:7f00:1',
    '::1:7f00:1',
    '::1:0:7f00:1',
    '::ffff:1:7f00:1',
    '64:ff9b:0:0:0:1:7f00:1',
    '65:ff9b::7f00:1',
    '64:ff9a::7f00:1',
    '2003:7f00:1::1',
  ])('allows %s', (ip) => {
    expect(isPrivateAddress(ip)).toBe(false);
  });
});
