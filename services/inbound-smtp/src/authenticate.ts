import { Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';
/**
 * Message authentication of received mail (SPF, DKIM, DMARC) with mailauth, DNS through the
 * configured DNS_SERVERS. Returns the `Authentication-Results` header value to add to
 * `details.headers`, or null when the check could not run (DNS down, timeout): a missing header
 * is better than a wrong verdict, and the mail is delivered either way.
 * mailauth reads a message only within the limits of header-block.ts (authenticationProblem:
 * its header parsing is quadratic in places); beyond them only SPF is checked (it needs no
 * header) and the header says `dkim=permerror` and `dmarc=permerror` with the reason, so a
 * sender cannot turn a failing verdict into a missing one by padding the header.
 * mailauth stays on 4.x: 5.x and later need Node >= 22.19 (their undici calls
 * worker_threads.markAsUncloneable), and on Node 20 their import throws, which this function's
 * catch turned into "no header" for every message.
 */
import { authenticationProblem, scanHeaderBlock } from '@mailyard/platform';
import { authenticate, spf } from 'mailauth';
import { type Lookup, cachedLookup } from './dns-cache';

export interface AuthInput {
  raw: Buffer;
  ip: string;
  helo: string;
  mailFrom: string;
  /** Our host name, the authserv-id of the header. */
  mta: string;
}

/** Lookups against DNS_SERVERS, answers kept for `cacheMs` (dns-cache.ts; 0: no cache). */
export function createAuthResolver(servers: string[], timeoutMs: number, cacheMs: number): Lookup {
  const resolver = new Resolver({ timeout: timeoutMs, tries: 1 });
  if (servers.length > 0) resolver.setServers(servers);
  const lookup: Lookup = (name, rrtype) => resolver.resolve(name, rrtype as 'TXT');
  return cacheMs > 0 ? cachedLookup(lookup, { ttlMs: cacheMs, maxEntries: 10_000 }) : lookup;
}

export async function authenticationResults(
  input: AuthInput,
  resolver: Lookup,
  deadlineMs: number,
  /** Told about an unexpected failure (DNS trouble is not one: mailauth reports it as temperror). */
  onError: (err: Error) => void = () => {},
): Promise<string | null> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), deadlineMs);
  });
  try {
    const problem = authenticationProblem(scanHeaderBlock(input.raw));
    return await Promise.race([
      problem ? spfOnly(input, resolver, problem) : full(input, resolver),
      deadline,
    ]);
  } catch (err) {
    onError(err as Error);
    return null;
  } finally {
    clearTimeout(timer);
  }
}

async function full(input: AuthInput, resolver: Lookup): Promise<string | null> {
  const result = await authenticate(input.raw, {
    ip: input.ip,
    helo: input.helo,
    mta: input.mta,
    sender: input.mailFrom,
    resolver: resolver as never,
    trustReceived: false,
    // BIMI is not part of Authentication-Results' spf/dkim/dmarc and costs a DNS query per mail.
    disableBimi: true,
  });
  const header = result.headers.split(/\r?\n(?![ \t])/).find((l) => /^Authentication-Results:/i.test(l));
  return header ? header.replace(/^Authentication-Results:\s*/i, '').replace(/\r?\n[ \t]+/g, ' ') : null;
}

/** A message over the limits: SPF as mailauth checks it, DKIM and DMARC permerror with the reason. */
async function spfOnly(input: AuthInput, resolver: Lookup, problem: string): Promise<string> {
  const helo = input.helo || input.ip;
  const result = await spf({
    ip: input.ip,
    helo: isIP(helo) ? `[${helo}]` : helo,
    mta: input.mta,
    sender: input.mailFrom,
    resolver: resolver as never,
  });
  const why = `(message header over the verification limits: ${problem})`;
  return `${input.mta}; dkim=permerror ${why}; ${result.info.replace(/\r?\n[ \t]+/g, ' ')}; dmarc=permerror ${why}`;
}
