/**
 * Message authentication of received mail (SPF, DKIM, DMARC) with mailauth, DNS through the
 * configured DNS_SERVERS. Returns the `Authentication-Results` header value to add to
 * `details.headers`, or null when the check could not run (DNS down, timeout): a missing header
 * is better than a wrong verdict, and the mail is delivered either way.
 */
import { Resolver } from 'node:dns/promises';

export interface AuthInput {
  raw: Buffer;
  ip: string;
  helo: string;
  mailFrom: string;
  /** Our host name, the authserv-id of the header. */
  mta: string;
}

export function createAuthResolver(servers: string[], timeoutMs: number) {
  const resolver = new Resolver({ timeout: timeoutMs, tries: 1 });
  if (servers.length > 0) resolver.setServers(servers);
  return (name: string, rrtype: string): Promise<unknown> => resolver.resolve(name, rrtype as 'TXT');
}

export async function authenticationResults(
  input: AuthInput,
  resolver: (name: string, rrtype: string) => Promise<unknown>,
  deadlineMs: number,
): Promise<string | null> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), deadlineMs);
  });
  try {
    // Loaded on first use: mailauth's entry point pulls in undici (BIMI/MTA-STS fetches), which
    // cannot load inside jest's VM; the service itself runs in plain node.
    const { authenticate } = await import('mailauth');
    const result = await Promise.race([
      authenticate(input.raw, {
        ip: input.ip,
        helo: input.helo,
        mta: input.mta,
        sender: input.mailFrom,
        resolver: resolver as never,
        trustReceived: false,
      }),
      deadline,
    ]);
    if (!result) return null;
    const header = result.headers.split(/\r?\n(?![ \t])/).find((l) => /^Authentication-Results:/i.test(l));
    return header ? header.replace(/^Authentication-Results:\s*/i, '').replace(/\r?\n[ \t]+/g, ' ') : null;
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
  }
}
