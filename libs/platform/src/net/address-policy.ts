/**
 * Which IP addresses an outbound connection to a user-supplied target may reach (docs/architecture.md
 * "Outbound connections"). Refused: every range that is not the public internet — unspecified,
 * loopback, private (RFC 1918, ULA), shared/CGNAT, link-local (cloud metadata lives there),
 * IETF protocol and documentation ranges, benchmarking, multicast, reserved and broadcast — plus
 * known metadata addresses outside those ranges. Anything that is not an IP address is refused.
 *
 * IPv6 addresses that carry an IPv4 address are refused when either the IPv6 range or the IPv4
 * address it carries is refused (a translator, tunnel or dual stack may deliver them to that IPv4
 * address), in every spelling (hex or dotted tail, `::` anywhere, upper case):
 * - IPv4-mapped `::ffff:a.b.c.d`: node's BlockList matches them against the IPv4 ranges itself;
 * - IPv4-compatible `::a.b.c.d` (deprecated) and SIIT IPv4-translated `::ffff:0:a.b.c.d`;
 * - NAT64 `64:ff9b::/96` (the local-use NAT64 prefix `64:ff9b:1::/48` is refused as a whole);
 * - 6to4 `2002:AABB:CCDD::/48`;
 * - ISATAP interface ids `…:0:5efe:a.b.c.d` and `…:200:5efe:a.b.c.d` under any /64 prefix.
 * Teredo (`2001::/32`, an obfuscated client IPv4) lies in `2001::/23`, refused as a whole.
 * An address with a zone id (`fe80::1%eth0`) is refused: zones scope link-local addresses, which
 * are refused anyway. Brackets belong to host names (`[::1]`); guarded-resolve.ts removes them
 * before asking, so a bracketed string here is not an address and is refused.
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

/** The eight 16-bit words of a valid IPv6 literal without a zone id (its dotted tail, if any, is last). */
export function ipv6Words(ip: string): number[] {
  let text = ip;
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${(a * 256 + b).toString(16)}:${(c * 256 + d).toString(16)}`;
  }
  const [head, tail = ''] = text.split('::') as [string, string?];
  const left = head.split(':').filter(Boolean);
  const right = tail.split(':').filter(Boolean);
  const gap = new Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...gap, ...right].map((w) => Number.parseInt(w, 16));
}

/** The IPv4 address an IPv6 address carries (compatible, SIIT, NAT64, 6to4, ISATAP), if any. */
function embeddedIPv4(w: number[]): string | null {
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  const zero = (from: number, to: number) => w.slice(from, to).every((x) => x === 0);
  if (zero(0, 6)) return v4(w[6]!, w[7]!); // ::a.b.c.d
  if (zero(0, 4) && w[4] === 0xffff && w[5] === 0) return v4(w[6]!, w[7]!); // ::ffff:0:a.b.c.d
  if (w[0] === 0x64 && w[1] === 0xff9b && zero(2, 6)) return v4(w[6]!, w[7]!); // 64:ff9b::a.b.c.d
  if (w[0] === 0x2002) return v4(w[1]!, w[2]!); // 2002:AABB:CCDD::
  if ((w[4] === 0 || w[4] === 0x200) && w[5] === 0x5efe) return v4(w[6]!, w[7]!); // ISATAP
  return null;
}

/** True for addresses an outbound connection to a user-supplied target must not reach. */
export function isPrivateAddress(ip: string): boolean {
  const family = isIP(ip);
  if (family === 4) return REFUSED.check(ip, 'ipv4');
  if (family !== 6 || ip.includes('%')) return true;
  if (REFUSED.check(ip, 'ipv6')) return true;
  const v4 = embeddedIPv4(ipv6Words(ip));
  return v4 !== null && REFUSED.check(v4, 'ipv4');
}
