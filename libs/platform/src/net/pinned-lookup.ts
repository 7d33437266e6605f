import { type LookupAddress, type LookupOptions, lookup as dnsLookup } from 'node:dns';
import { isIP } from 'node:net';
import { isPrivateAddress } from './host-policy';

/**
 * A `dns.lookup`-compatible function for outbound connections to user-supplied targets
 * (webhooks): the name is resolved once, every address is checked, and the socket connects to
 * the checked address (node's `lookup` option), so a DNS answer that changes between a check
 * and the connection (rebinding) cannot reach a private address. Refusals never name the
 * resolved address.
 *
 * INTERIM ADAPTER, the one place to switch at merge: the project's guarded connect
 * (`guardedLookup({ allowPrivate })`, `checkAddress`, `OutboundTargetError` in
 * libs/platform/src/net, branch h/ssrf) replaces this file's body; its errors carry the same
 * `code` values (ETARGET_PRIVATE, ETARGET_UNRESOLVED), which is all callers look at.
 */
export class OutboundTargetRefused extends Error {
  override name = 'OutboundTargetRefused';
  readonly code = 'ETARGET_PRIVATE';
  constructor(readonly host: string) {
    super(`${host} resolves to a private, loopback or link-local address`);
  }
}

export type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

export type PinnedLookup = (hostname: string, options: LookupOptions, callback: LookupCallback) => void;

export function pinnedLookup(opts: { allowPrivate: boolean }): PinnedLookup {
  return (hostname, options, callback) => {
    // Bracketed IPv6 literals reach lookup without brackets in node; strip defensively.
    const host = hostname.replace(/^\[(.*)\]$/, '$1');
    dnsLookup(host, { ...options, all: true, verbatim: true }, (err, addresses) => {
      if (err)
        return callback(
          Object.assign(new Error(`${host} does not resolve`), { code: 'ETARGET_UNRESOLVED' }),
          '',
        );
      const list = addresses as LookupAddress[];
      if (list.length === 0) {
        const e = Object.assign(new Error(`${host} does not resolve`), { code: 'ETARGET_UNRESOLVED' });
        return callback(e, '');
      }
      if (!opts.allowPrivate && list.some((a) => isPrivateAddress(a.address)))
        return callback(new OutboundTargetRefused(host), '');
      if (options.all) return callback(null, list);
      const first = list[0]!;
      callback(null, first.address, first.family);
    });
  };
}

/**
 * Node connects to an IP-literal host without calling `lookup`: callers check literals with
 * this before connecting. Returns the refusal for a private literal, null otherwise.
 */
export function refuseLiteralHost(
  hostname: string,
  opts: { allowPrivate: boolean },
): OutboundTargetRefused | null {
  const host = hostname.replace(/^\[(.*)\]$/, '$1');
  if (opts.allowPrivate || isIP(host) === 0) return null;
  return isPrivateAddress(host) ? new OutboundTargetRefused(host) : null;
}

/** Codes of refused or unresolvable targets (the guarded connect's OutboundTargetError codes). */
export const isPrivateTargetError = (err: unknown): boolean =>
  (err as NodeJS.ErrnoException | null)?.code === 'ETARGET_PRIVATE';
export const isUnresolvedTargetError = (err: unknown): boolean =>
  ['ETARGET_UNRESOLVED', 'ENOTFOUND', 'EAI_AGAIN', 'ENODATA'].includes(
    String((err as NodeJS.ErrnoException | null)?.code),
  );
