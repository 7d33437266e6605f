import { Resolver } from 'node:dns/promises';
import type { Config } from '../config/env';

export type DnsConfig = Pick<Config, 'DNS_SERVERS' | 'DNS_TIMEOUT_MS' | 'DNS_TRIES'>;

/**
 * A resolver over DNS_SERVERS (the system's resolv.conf when empty) with a bounded timeout:
 * each query gives up after about DNS_TIMEOUT_MS per try, DNS_TRIES tries.
 */
export function createDnsResolver(config: DnsConfig): Resolver {
  const resolver = new Resolver({ timeout: config.DNS_TIMEOUT_MS, tries: config.DNS_TRIES });
  if (config.DNS_SERVERS.length > 0) resolver.setServers(config.DNS_SERVERS);
  return resolver;
}

/** Why a lookup found nothing: no such name, the name has no record of that type, no answer in time, other. */
export type DnsFailure = 'nxdomain' | 'nodata' | 'timeout' | 'error';

export type DnsResult<T> = { ok: true; records: T[] } | { ok: false; failure: DnsFailure; code: string };

export function classifyDnsError(err: unknown): { failure: DnsFailure; code: string } {
  const code = String((err as NodeJS.ErrnoException)?.code ?? 'EUNKNOWN');
  if (code === 'ENOTFOUND') return { failure: 'nxdomain', code };
  if (code === 'ENODATA') return { failure: 'nodata', code };
  if (code === 'ETIMEOUT' || code === 'ECANCELLED') return { failure: 'timeout', code };
  return { failure: 'error', code };
}

/** TXT records at `name`, each one's character-strings joined (DKIM keys span several). */
export async function lookupTxt(resolver: Resolver, name: string): Promise<DnsResult<string>> {
  try {
    return { ok: true, records: (await resolver.resolveTxt(name)).map((chunks) => chunks.join('')) };
  } catch (err) {
    return { ok: false, ...classifyDnsError(err) };
  }
}

/** MX records at `name`, lowest preference first, exchange names lowercased without the root dot. */
export async function lookupMx(
  resolver: Resolver,
  name: string,
): Promise<DnsResult<{ exchange: string; priority: number }>> {
  try {
    const records = await resolver.resolveMx(name);
    return {
      ok: true,
      records: records
        .map((r) => ({ exchange: r.exchange.toLowerCase().replace(/\.$/, ''), priority: r.priority }))
        .sort((a, b) => a.priority - b.priority),
    };
  } catch (err) {
    return { ok: false, ...classifyDnsError(err) };
  }
}
