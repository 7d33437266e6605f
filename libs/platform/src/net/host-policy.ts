import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

// Loopback, private, link-local (cloud metadata), CGNAT, unspecified, multicast and reserved ranges.
const PRIVATE = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  PRIVATE.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  PRIVATE.addSubnet(net, prefix, 'ipv6');

/** True for addresses that are not on the public internet (IPv4-mapped IPv6 included). */
export function isPrivateAddress(ip: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return PRIVATE.check(mapped[1]!, 'ipv4');
  const family = isIP(ip);
  if (family === 0) return true;
  return PRIVATE.check(ip, family === 4 ? 'ipv4' : 'ipv6');
}

/**
 * Why a user-supplied server host may not be connected to, or null when it may: every address
 * it resolves to must be public unless private hosts are allowed. The address can still change
 * between this check and the connection (DNS rebinding); the check stops the plain cases.
 */
export async function hostRefusal(host: string, allowPrivate: boolean): Promise<string | null> {
  if (allowPrivate) return null;
  let addresses: string[];
  try {
    addresses = isIP(host)
      ? [host]
      : (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
  } catch {
    return null; // Unresolvable: the connection attempt reports that itself.
  }
  const internal = addresses.find(isPrivateAddress);
  return internal ? `${host} resolves to a private, loopback or link-local address (${internal})` : null;
}
