/**
 * A small answer cache in front of the DNS lookups of message authentication (authenticate.ts).
 * Mail comes in bursts from few sender domains, and every message needs the same SPF, DMARC and
 * DKIM key records: without a cache each message costs several round trips to DNS_SERVERS.
 * - answers and "no such name / no data" (ENOTFOUND, ENODATA) are kept for `ttlMs` (node's TXT
 *   lookups carry no TTL, so one short fixed lifetime, far below usual record TTLs);
 * - temporary failures (timeouts, SERVFAIL, refused) are never kept: the next message asks again;
 * - lookups already in flight are shared; at most `maxEntries` names are kept (oldest dropped).
 */
export type Lookup = (name: string, rrtype: string) => Promise<unknown>;

const DEFINITE = new Set(['ENOTFOUND', 'ENODATA']);

export function cachedLookup(
  lookup: Lookup,
  opts: { ttlMs: number; maxEntries: number; now?: () => number },
): Lookup {
  const now = opts.now ?? Date.now;
  const entries = new Map<string, { until: number; answer: Promise<unknown> }>();
  return (name, rrtype) => {
    const key = `${rrtype} ${name.toLowerCase()}`;
    const hit = entries.get(key);
    if (hit && hit.until > now()) return hit.answer;
    entries.delete(key);
    const answer = lookup(name, rrtype);
    entries.set(key, { until: now() + opts.ttlMs, answer });
    answer.catch((err: NodeJS.ErrnoException) => {
      if (!DEFINITE.has(err?.code ?? '') && entries.get(key)?.answer === answer) entries.delete(key);
    });
    if (entries.size > opts.maxEntries) entries.delete(entries.keys().next().value as string);
    return answer;
  };
}
