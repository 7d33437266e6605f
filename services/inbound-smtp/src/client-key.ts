/**
 * What the MX counts connections per (INBOUND_MAX_PER_IP), pure: an IPv4 address itself, an
 * IPv6 client by its /64 (one site gets a whole /64: counting its single addresses would let it
 * open any number of sessions). smtp-server hands over `::ffff:a.b.c.d` as `a.b.c.d` already.
 */
import { isIPv6 } from 'node:net';

export function clientKey(remoteAddress: string): string {
  if (!isIPv6(remoteAddress)) return remoteAddress;
  const [head = '', tail] = remoteAddress.toLowerCase().replace(/%.*$/, '').split('::');
  const left = head ? head.split(':') : [];
  let groups = left;
  if (tail !== undefined && left.length < 4) {
    // `::` stands for the zero groups between the written ones (an IPv4 tail is two groups)
    const right = tail ? tail.split(':') : [];
    const rightGroups = right.length + (right.some((g) => g.includes('.')) ? 1 : 0);
    groups = [...left, ...Array<string>(8 - left.length - rightGroups).fill('0'), ...right];
  }
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}
