import { BlockList, isIP } from 'node:net';
import type { DnsResult } from '@mailyard/platform';
import type { DnsSettings } from './dns-records';

/** Result of checking one record; `inconclusive` when DNS gave no answer (timeout, server failure). */
export interface RecordOutcome {
  verified: boolean;
  reason?: string;
  inconclusive?: boolean;
}

const ok: RecordOutcome = { verified: true };

function lookupFailed(
  name: string,
  type: string,
  r: Extract<DnsResult<unknown>, { ok: false }>,
  note = '',
): RecordOutcome {
  switch (r.failure) {
    case 'nxdomain':
      return {
        verified: false,
        reason: `No ${type} record at ${name}: the name does not exist (NXDOMAIN)${note}`,
      };
    case 'nodata':
      return { verified: false, reason: `No ${type} record at ${name}${note}` };
    case 'timeout':
      return {
        verified: false,
        inconclusive: true,
        reason: `DNS lookup of ${type} ${name} timed out${note}`,
      };
    default:
      return {
        verified: false,
        inconclusive: true,
        reason: `DNS lookup of ${type} ${name} failed (${r.code})${note}`,
      };
  }
}

/** DKIM tag list (RFC 6376 3.2): `tag=value` pairs separated by `;`; whitespace inside values is ignored. */
export function dkimTags(record: string): Map<string, string> {
  const tags = new Map<string, string>();
  for (const part of record.split(';')) {
    const i = part.indexOf('=');
    if (i > 0) tags.set(part.slice(0, i).trim().toLowerCase(), part.slice(i + 1).replace(/\s+/g, ''));
  }
  return tags;
}

/** The TXT at `<selector>._domainkey.<domain>` must carry our public key as `p=`. */
export function checkDkim(name: string, expectedKey: string, lookup: DnsResult<string>): RecordOutcome {
  if (!lookup.ok) return lookupFailed(name, 'TXT', lookup);
  const keys = lookup.records.map(dkimTags).filter((t) => t.has('p'));
  if (keys.length === 0)
    return { verified: false, reason: `TXT record at ${name} is not a DKIM key record (no p= tag)` };
  const matches = keys.filter((t) => t.get('p') === expectedKey);
  if (
    matches.some((t) => (t.get('v') ?? 'DKIM1') === 'DKIM1' && (t.get('k') ?? 'rsa').toLowerCase() === 'rsa')
  )
    return ok;
  if (matches.length > 0)
    return { verified: false, reason: `DKIM record at ${name} has the right key but a wrong v= or k= tag` };
  if (keys.every((t) => t.get('p') === ''))
    return { verified: false, reason: `DKIM key at ${name} is revoked (empty p=)` };
  return {
    verified: false,
    reason: `DKIM public key at ${name} does not match the key issued for this domain`,
  };
}

interface IpRange {
  address: string;
  prefix: number;
  family: 'ipv4' | 'ipv6';
}

function parseRange(text: string): IpRange | null {
  const [address = '', prefixText] = text.split('/');
  const version = isIP(address);
  if (version === 0) return null;
  const max = version === 4 ? 32 : 128;
  const prefix = prefixText === undefined ? max : Number(prefixText);
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > max) return null;
  return { address, prefix, family: version === 4 ? 'ipv4' : 'ipv6' };
}

function covers(outer: IpRange, inner: IpRange): boolean {
  if (outer.family !== inner.family || outer.prefix > inner.prefix) return false;
  const list = new BlockList();
  list.addSubnet(outer.address, outer.prefix, outer.family);
  return list.check(inner.address, inner.family);
}

/**
 * The domain's one SPF record must authorize this service: `include:<SPF_INCLUDE>` (or
 * `redirect=` to it), or `ip4:`/`ip6:` mechanisms covering every required IP (the domain's
 * `ips` and SENDING_IPS), or `+all`. With neither an include nor IPs configured, any single
 * valid SPF record passes. Nested includes are not followed.
 */
export function checkSpf(
  domain: string,
  requiredIps: string[],
  settings: DnsSettings,
  lookup: DnsResult<string>,
): RecordOutcome {
  const none: RecordOutcome = {
    verified: false,
    reason: `No SPF record (TXT starting with v=spf1) at ${domain}`,
  };
  if (!lookup.ok) return lookup.failure === 'nodata' ? none : lookupFailed(domain, 'TXT', lookup, ' (SPF)');
  const spf = lookup.records.map((r) => r.trim()).filter((r) => /^v=spf1(\s|$)/i.test(r));
  if (spf.length === 0) return none;
  if (spf.length > 1) {
    return {
      verified: false,
      reason: `${spf.length} SPF records at ${domain}; publish exactly one (RFC 7208), merging their mechanisms`,
    };
  }
  const passing = spf[0]!
    .split(/\s+/)
    .slice(1)
    .map((term) => (/^[+\-~?]/.test(term) ? { q: term[0], body: term.slice(1) } : { q: '+', body: term }))
    .filter((t) => t.q === '+')
    .map((t) => t.body.toLowerCase());
  if (passing.includes('all')) return ok;
  const include = settings.spfInclude?.toLowerCase();
  if (include && (passing.includes(`include:${include}`) || passing.includes(`redirect=${include}`)))
    return ok;
  const published = passing
    .filter((b) => b.startsWith('ip4:') || b.startsWith('ip6:'))
    .map((b) => parseRange(b.slice(4)))
    .filter((r): r is IpRange => r !== null);
  const missing = requiredIps.filter((ip) => {
    const wanted = parseRange(ip);
    return wanted !== null && !published.some((p) => covers(p, wanted));
  });
  if (requiredIps.length > 0 && missing.length === 0) return ok;
  if (!include && requiredIps.length === 0) return ok;
  const add = include
    ? `include:${include}`
    : missing.map((ip) => (ip.includes(':') ? `ip6:${ip}` : `ip4:${ip}`)).join(' ');
  return { verified: false, reason: `SPF record at ${domain} does not authorize this service; add ${add}` };
}

const DMARC_NOTE = ' (recommended, not required for verification)';

/** The `mailto:` addresses of a DMARC record's `rua=` tag (RFC 7489 6.4: comma separated, `!size` suffix allowed), lowercase. */
export function dmarcRuaAddresses(record: string): string[] {
  const rua = dkimTags(record).get('rua');
  if (!rua) return [];
  return rua
    .split(',')
    .map((uri) => uri.replace(/!.*$/, '').toLowerCase())
    .filter((uri) => uri.startsWith('mailto:'))
    .map((uri) => decodeURIComponent(uri.slice('mailto:'.length)));
}

/**
 * A DMARC record (`v=DMARC1`) at `_dmarc.<domain>` whose `rua=` names our report address
 * (`dmarc@<SERVICE_DOMAIN>`). A record without it fails with a reason telling the owner to add
 * our address to the record they have (keeping their policy and their other report addresses),
 * never to replace it. Recommended only: the domain verifies without it.
 */
export function checkDmarc(name: string, rua: string, lookup: DnsResult<string>): RecordOutcome {
  if (!lookup.ok) return lookupFailed(name, 'TXT', lookup, DMARC_NOTE);
  const dmarc = lookup.records.map((r) => r.trim()).filter((r) => /^v=DMARC1\s*(;|$)/i.test(r));
  if (dmarc.length === 0)
    return {
      verified: false,
      reason: `No DMARC record (TXT starting with v=DMARC1) at ${name}${DMARC_NOTE}`,
    };
  if (dmarc.some((r) => safeRua(r).includes(rua.toLowerCase()))) return ok;
  return {
    verified: false,
    reason: `DMARC record at ${name} does not send aggregate reports to this service: keep the record and add mailto:${rua} to its rua= tag (comma separated after any address it has)${DMARC_NOTE}`,
  };
}

/** dmarcRuaAddresses, with a malformed %-escape read as no address. */
function safeRua(record: string): string[] {
  try {
    return dmarcRuaAddresses(record);
  } catch {
    return [];
  }
}

const MX_NOTE = ' (needed only to receive inbound email)';

export function checkMx(
  domain: string,
  mxHost: string,
  lookup: DnsResult<{ exchange: string; priority: number }>,
): RecordOutcome {
  if (!lookup.ok) return lookupFailed(domain, 'MX', lookup, MX_NOTE);
  if (lookup.records.some((r) => r.exchange === mxHost.toLowerCase())) return ok;
  const seen = lookup.records.map((r) => r.exchange || '.').join(', ');
  return { verified: false, reason: `MX records of ${domain} point at ${seen}, not ${mxHost}${MX_NOTE}` };
}
