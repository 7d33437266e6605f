/**
 * Which IP addresses an outbound connection to a user-supplied target may reach (DESIGN.md
 * Security invariant 3). Refused: every range that is not the public internet — unspecified,
 * loopback, private (RFC 1918, ULA), shared/CGNAT, link-local (cloud metadata lives there),
 * IETF protocol and documentation ranges, benchmarking, multicast, reserved and broadcast — plus
 * known metadata addresses outside those ranges. IPv6 forms that carry an IPv4 address
 * (IPv4-mapped, IPv4-compatible, NAT64 64:ff9b::/96, 6to4 2002::/16) are judged by that IPv4
 * address. Anything that is not an IP address is refused.
 */
import { BlockList, isIP } from 'node:net';

const REFUSED_V4: ReadonlyArray<readonly [string, number]> = [
  ['0.0.0.0', 8], // "this network"; 0.0.0.0 reaches the local host on Linux
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // shared address space (CGNAT); Alibaba Cloud metadata 100.100.100.200
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local; AWS/GCP/Azure metadata 169.254.169.254
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // IETF protocol assignments; Oracle Cloud metadata 192.0.0.192
  ['192.0.2.0', 24], // TEST-NET-1
  ['192.88.99.0', 24], // 6to4 relay anycast (deprecated)
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // TEST-NET-2
  ['203.0.113.0', 24], // TEST-NET-3
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
  ['168.63.129.16', 32], // Azure platform (WireServer) endpoint
];
const REFUSED_V6: ReadonlyArray<readonly [string, number]> = [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b:1::', 48], // local-use NAT64
  ['100::', 64], // discard-only
  ['2001::', 23], // IETF protocol assignments (Teredo, ORCHID, ...)
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique local; AWS metadata fd00:ec2::254
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
];

const REFUSED = new BlockList();
for (const [net, prefix] of REFUSED_V4) REFUSED.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of REFUSED_V6) REFUSED.addSubnet(net, prefix, 'ipv6');

/** The IPv4 address an IPv6 address carries (mapped, compatible, NAT64, 6to4), if any. */
function embeddedIPv4(ip: string): string | null {
  const dotted = /^(?:::ffff:|::|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (dotted) return dotted[1]!;
  const words = expandIPv6(ip);
  if (!words) return null;
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  const zeros = (from: number, to: number) => words.slice(from, to).every((w) => w === 0);
  if (zeros(0, 5) && words[5] === 0xffff) return v4(words[6]!, words[7]!); // ::ffff:a.b.c.d
  if (zeros(0, 6) && (words[6]! !== 0 || words[7]! > 1)) return v4(words[6]!, words[7]!); // ::a.b.c.d
  if (words[0] === 0x64 && words[1] === 0xff9b && zeros(2, 6)) return v4(words[6]!, words[7]!);
  if (words[0] === 0x2002) return v4(words[1]!, words[2]!); // 6to4
  return null;
}

/** The eight 16-bit words of an IPv6 address, or null when it is not one. */
function expandIPv6(ip: string): number[] | null {
  if (isIP(ip) !== 6) return null;
  let text = ip.replace(/%.*$/, '');
  const tail = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (tail) {
    const [a, b, c, d] = tail.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, tail.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, rest] = text.split('::') as [string, string | undefined];
  const parse = (s: string) => (s ? s.split(':').map((w) => Number.parseInt(w, 16)) : []);
  const left = parse(head);
  const right = rest === undefined ? [] : parse(rest);
  const fill = rest === undefined ? 0 : 8 - left.length - right.length;
  return [...left, ...new Array<number>(fill).fill(0), ...right];
}

/** True for addresses an outbound connection to a user-supplied target must not reach. */
export function isPrivateAddress(ip: string): boolean {
  const family = isIP(ip);
  if (family === 0) return true;
  if (family === 4) return REFUSED.check(ip, 'ipv4');
  const v4 = embeddedIPv4(ip);
  if (v4 !== null) return REFUSED.check(v4, 'ipv4');
  return REFUSED.check(ip.replace(/%.*$/, ''), 'ipv6');
}
