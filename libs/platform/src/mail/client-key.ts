/**
 * What the MX counts connections per (INBOUND_MAX_PER_IP), pure: an IPv4 address itself, an
 * IPv6 client by its /64 (one site gets a whole /64: counting its single addresses would let it
 * open any number of sessions). smtp-server hands over `::ffff:a.b.c.d` as `a.b.c.d` already.
 */
import { isIPv6 } from 'node:net';
import { ipv6Words } from '../net/address-policy';

export function clientKey(remoteAddress: string): string {
  if (!isIPv6(remoteAddress)) return remoteAddress;
  const words = ipv6Words(remoteAddress.replace(/%.*$/, ''));
  return `${words
    .slice(0, 4)
    .map((w) => w.toString(16))
    .join(':')}::/64`;
}
