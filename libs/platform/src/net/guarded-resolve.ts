/**
 * Resolves a user-supplied host once, with the project's resolver (DNS_SERVERS, or the system's
 * DNS servers from resolv.conf when empty; /etc/hosts is not read), and checks every address
 * against the address policy. The caller connects to the returned address and to nothing else,
 * so a name cannot pass the check with one answer and connect with another (DNS rebinding).
 *
 * - Host forms: a name (one trailing dot dropped, case-insensitive), an IPv4 or IPv6 literal
 *   (brackets allowed). `localhost` and `*.localhost` are loopback (RFC 6761) without asking DNS.
 * - A name with any refused address is refused as a whole (a mix of public and internal answers
 *   is how rebinding looks), unless private targets are allowed.
 * - A name without an address is refused (ETARGET_UNRESOLVED); no DNS answer in time is the
 *   same refusal, marked temporary.
 */
import type { Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';
import { type DnsConfig, classifyDnsError, createDnsResolver } from '../dns/resolver';
import { isPrivateAddress } from './address-policy';
import { OutboundTargetError } from './outbound-error';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

export interface GuardOptions {
  /** Let the target be private/loopback/link-local (the MAILER_ALLOW_PRIVATE_HOSTS style opt-outs). */
  allowPrivate: boolean;
  /**
   * The project's resolver: the config's DNS settings (DNS_SERVERS, DNS_TIMEOUT_MS, DNS_TRIES)
   * or a Resolver. Default: the system's DNS servers with a 5 s timeout, 2 tries.
   */
  dns?: DnsConfig | Resolver;
}

const DEFAULT_DNS: DnsConfig = { DNS_SERVERS: [], DNS_TIMEOUT_MS: 5000, DNS_TRIES: 2 };
const resolvers = new Map<string, Resolver>();

function resolverFor(dns: GuardOptions['dns']): Resolver {
  if (dns && 'resolve4' in dns) return dns;
  const config = dns ?? DEFAULT_DNS;
  const key = JSON.stringify([config.DNS_SERVERS, config.DNS_TIMEOUT_MS, config.DNS_TRIES]);
  let resolver = resolvers.get(key);
  if (!resolver) {
    resolver = createDnsResolver(config);
    if (resolvers.size > 32) resolvers.clear();
    resolvers.set(key, resolver);
  }
  return resolver;
}

/** `host` without brackets around an IPv6 literal and without one trailing dot, lowercased. */
export function normalizeHost(host: string): string {
  const trimmed = host.trim().toLowerCase();
  const bracketed = /^\[(.*)\]$/.exec(trimmed);
  if (bracketed) return bracketed[1]!;
  return trimmed.endsWith('.') ? trimmed.slice(0, -1) : trimmed;
}

const familyOf = (address: string): 4 | 6 => (isIP(address) === 6 ? 6 : 4);

/** Throws OutboundTargetError('ETARGET_PRIVATE') naming `host` when `address` is refused. */
export function checkAddress(host: string, address: string, allowPrivate: boolean): ResolvedAddress {
  if (isIP(address) === 0 || (!allowPrivate && isPrivateAddress(address)))
    throw OutboundTargetError.private(host);
  return { address, family: familyOf(address) };
}

/**
 * Every address of `host` (IPv4 first), each checked; throws OutboundTargetError when the host
 * does not resolve or any address is refused.
 */
export async function resolveGuardedAll(host: string, options: GuardOptions): Promise<ResolvedAddress[]> {
  const name = normalizeHost(host);
  if (isIP(name)) return [checkAddress(host, name, options.allowPrivate)];
  if (name === '' || /[\s/@[\]]/.test(name))
    throw OutboundTargetError.unresolved(host, 'not a host name', false);
  if (name === 'localhost' || name.endsWith('.localhost')) {
    if (!options.allowPrivate) throw OutboundTargetError.private(host);
    return [checkAddress(host, '127.0.0.1', true)];
  }
  const resolver = resolverFor(options.dns);
  const [v4, v6] = await Promise.allSettled([resolver.resolve4(name), resolver.resolve6(name)]);
  const addresses = [
    ...(v4.status === 'fulfilled' ? v4.value : []),
    ...(v6.status === 'fulfilled' ? v6.value : []),
  ];
  if (addresses.length === 0) {
    const failures = [v4, v6]
      .filter((r): r is PromiseRejectedResult => r.status === 'rejected')
      .map((r) => classifyDnsError(r.reason));
    const timeout = failures.find((f) => f.failure === 'timeout' || f.failure === 'error');
    if (timeout) throw OutboundTargetError.unresolved(host, `no DNS answer (${timeout.code})`, true);
    const nx = failures.some((f) => f.failure === 'nxdomain');
    throw OutboundTargetError.unresolved(
      host,
      nx ? 'the name does not exist' : 'the name has no address',
      false,
    );
  }
  return addresses.map((address) => checkAddress(host, address, options.allowPrivate));
}

/** The address to connect to for `host`: resolved once, every answer checked (see the file comment). */
export async function resolveGuarded(host: string, options: GuardOptions): Promise<ResolvedAddress> {
  const all = await resolveGuardedAll(host, options);
  return all[0]!;
}
