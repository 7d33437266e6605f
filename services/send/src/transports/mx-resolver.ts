/**
 * Finds the mail servers of a recipient domain (RFC 5321 section 5.1) through DNS_SERVERS (or
 * the system resolver when unset): MX records by preference, each exchange resolved to its
 * A/AAAA addresses; a domain without MX records is its own mail server (implicit MX, its A/AAAA).
 * A null MX (RFC 7505), a domain that does not exist or one with no address at all is a
 * permanent failure; DNS timeouts and server failures are temporary. Answers are cached for
 * `cacheMs` (failures are not). Bounce categories: a null MX is `invalid_recipient` (the domain
 * accepts no mail at all, so the address suppresses); every other DNS failure is `dns`.
 */
import { Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { BounceCategory } from '@mailyard/contracts';
import { type DeliveryFailure, localFailure } from '@mailyard/providers';

export interface MxHost {
  /** The exchange's name (TLS server name), or the address itself for an IP literal. */
  host: string;
  addresses: string[];
}

export type MxAnswer = { ok: true; hosts: MxHost[] } | { ok: false; failure: DeliveryFailure };

export interface MxResolverOptions {
  servers: string[];
  timeoutMs: number;
  tries: number;
  cacheMs?: number;
}

const PERMANENT_DNS = new Set(['ENOTFOUND', 'NXDOMAIN']);
const NO_DATA = new Set(['ENODATA', 'ENOTFOUND', 'NXDOMAIN']);

export class MxResolver {
  private readonly resolver: Resolver;
  private readonly cache = new Map<string, { at: number; answer: MxAnswer }>();
  private readonly cacheMs: number;

  constructor(o: MxResolverOptions) {
    this.resolver = new Resolver({ timeout: o.timeoutMs, tries: o.tries });
    if (o.servers.length > 0) this.resolver.setServers(o.servers);
    this.cacheMs = o.cacheMs ?? 60_000;
  }

  async resolve(domain: string): Promise<MxAnswer> {
    const name = domain.toLowerCase().replace(/\.$/, '');
    const cached = this.cache.get(name);
    if (cached && Date.now() - cached.at < this.cacheMs) return cached.answer;
    const answer = await this.lookup(name);
    if (answer.ok) {
      if (this.cache.size > 10_000) this.cache.clear();
      this.cache.set(name, { at: Date.now(), answer });
    }
    return answer;
  }

  private async lookup(domain: string): Promise<MxAnswer> {
    let records: { exchange: string; priority: number }[];
    try {
      records = await this.resolver.resolveMx(domain);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? '';
      if (PERMANENT_DNS.has(code)) return fail('permanent', 'Recipient domain does not exist', 'dns', err);
      if (code !== 'ENODATA')
        return fail('temporary', 'DNS lookup of the recipient domain failed', 'dns', err);
      records = [];
    }
    if (records.some((r) => r.exchange === '' || r.exchange === '.')) {
      // RFC 7505: the domain says it accepts no mail at all; the address can never receive any.
      return fail('permanent', 'Recipient domain does not accept mail (null MX)', 'invalid_recipient');
    }
    const names =
      records.length > 0
        ? [...records].sort((a, b) => a.priority - b.priority).map((r) => r.exchange)
        : [domain];
    const hosts: MxHost[] = [];
    let temporary: unknown;
    for (const host of names) {
      const resolved = await this.addresses(host);
      if (resolved.error) temporary ??= resolved.error;
      if (resolved.addresses.length > 0) hosts.push({ host, addresses: resolved.addresses });
    }
    if (hosts.length > 0) return { ok: true, hosts };
    if (temporary)
      return fail('temporary', "DNS lookup of the recipient's mail server failed", 'dns', temporary);
    return records.length > 0
      ? fail('permanent', "Recipient domain's mail servers have no address", 'dns')
      : fail('permanent', 'Recipient domain has no mail server', 'dns');
  }

  /** A and AAAA addresses of `host` (IPv4 first); `error` is set for a temporary DNS failure. */
  private async addresses(host: string): Promise<{ addresses: string[]; error?: unknown }> {
    if (isIP(host)) return { addresses: [host] };
    const [v4, v6] = await Promise.allSettled([this.resolver.resolve4(host), this.resolver.resolve6(host)]);
    const addresses = [
      ...(v4.status === 'fulfilled' ? v4.value : []),
      ...(v6.status === 'fulfilled' ? v6.value : []),
    ];
    const failed = [v4, v6].find(
      (r): r is PromiseRejectedResult =>
        r.status === 'rejected' && !NO_DATA.has((r.reason as NodeJS.ErrnoException).code ?? ''),
    );
    return failed ? { addresses, error: failed.reason } : { addresses };
  }
}

function fail(
  kind: 'temporary' | 'permanent',
  reason: string,
  category: BounceCategory,
  err?: unknown,
): MxAnswer {
  const detail = err instanceof Error ? err.message : '';
  return { ok: false, failure: localFailure(kind, reason, detail, category) };
}
