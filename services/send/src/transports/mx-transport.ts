/**
 * Domain mailers without SMTP_RELAY_URL: straight to each recipient domain's MX on MX_PORT.
 * Recipients are grouped by domain (one SMTP transaction per domain); the groups go out in
 * parallel. Each MX address has its own pool, reused by every message to it. MX hosts are tried
 * in preference order, each of their addresses in turn, moving on only when the connection
 * fails or the server answers 421 (closing); any other reply is the outcome. STARTTLS is used
 * when offered, opportunistically: certificates are not verified (MX certificates rarely match
 * and unauthenticated TLS still beats plaintext, as in Postfix's `smtp_tls_security_level =
 * may`), and a failed handshake falls back to plaintext.
 *
 * SSRF: the recipient domain is the tenant's choice, so are its MX records. An MX host with any
 * address that is not public is skipped (unless MX_ALLOW_PRIVATE_HOSTS); when no MX host is left
 * the copy fails for good without connecting. Every connection goes through the guarded connect
 * with the checked address (no second resolution by nodemailer), and errors name the MX host,
 * never its address.
 *
 * Deadline: the whole delivery to one domain (DNS, then every MX host and address tried) ends
 * within `deliveryTimeoutMs` (SEND_MX_DELIVERY_TIMEOUT_MS). When it passes, the connection in
 * use is closed, no further MX is tried, and the recipients get a temporary failure (retried
 * like any timeout); a reply that arrived in time stays the outcome.
 */
import { OutboundTargetError, guardedConnect, isPrivateAddress } from '@mailyard/platform';
import { type DeliveryFailure, TARGET_REFUSED_REASON, localFailure } from '@mailyard/providers';
import type { PoolCache } from '@mailyard/providers';
import type { Envelope, RecipientResult } from '@mailyard/providers';
import type { MxAnswer, MxHost, MxResolver } from './mx-resolver';
import type { MessageTransport } from './types';

export interface MxSettings {
  port: number;
  timeoutMs: number;
  /** Total deadline of the delivery to one recipient domain. */
  deliveryTimeoutMs: number;
  maxConnections: number;
  clientName: string;
  /** MX_ALLOW_PRIVATE_HOSTS: private/loopback MX addresses may be used (tests, private networks). */
  allowPrivate: boolean;
}

export class MxTransport implements MessageTransport {
  constructor(
    private readonly pools: PoolCache,
    private readonly resolver: MxResolver,
    private readonly settings: MxSettings,
  ) {}

  async deliver(envelope: Envelope, raw: Buffer): Promise<RecipientResult[]> {
    const deadline = Date.now() + this.settings.deliveryTimeoutMs;
    const byDomain = new Map<string, string[]>();
    for (const email of envelope.to) {
      const domain = email.slice(email.lastIndexOf('@') + 1).toLowerCase();
      byDomain.set(domain, [...(byDomain.get(domain) ?? []), email]);
    }
    const groups = await Promise.all(
      [...byDomain].map(([domain, to]) =>
        this.deliverToDomain(domain, { from: envelope.from, to }, raw, deadline),
      ),
    );
    return groups.flat();
  }

  private async deliverToDomain(
    domain: string,
    envelope: Envelope,
    raw: Buffer,
    deadline: number,
  ): Promise<RecipientResult[]> {
    const answer = await beforeDeadline(this.resolver.resolve(domain), deadline);
    if (answer === null) return failAll(envelope, this.deadlineFailure(domain));
    if (!answer.ok) return failAll(envelope, answer.failure);
    const allowed = answer.hosts.filter((mx) => this.allowed(mx));
    if (allowed.length === 0) {
      const refused = OutboundTargetError.private(answer.hosts[0]!.host).message;
      return failAll(envelope, localFailure('permanent', TARGET_REFUSED_REASON, refused));
    }
    let last: RecipientResult[] = [];
    for (const mx of allowed) {
      for (const address of mx.addresses) {
        if (Date.now() >= deadline) return failAll(envelope, this.deadlineFailure(domain));
        last = await this.pools.send(this.pool(mx.host, address), envelope, raw, deadline);
        if (Date.now() >= deadline && shouldTryNext(last))
          return failAll(envelope, this.deadlineFailure(domain));
        if (!shouldTryNext(last)) return last;
      }
    }
    return last;
  }

  private allowed(mx: MxHost): boolean {
    return this.settings.allowPrivate || !mx.addresses.some(isPrivateAddress);
  }

  private deadlineFailure(domain: string): DeliveryFailure {
    return localFailure(
      'temporary',
      'Connection to the mail server timed out',
      `Delivery to the mail servers of ${domain} did not finish within ${this.settings.deliveryTimeoutMs} ms`,
      'unknown',
    );
  }

  private pool(host: string, address: string) {
    const s = this.settings;
    return this.pools.get(`mx:${host}|${address}:${s.port}`, () => ({
      connect: (timeoutMs) =>
        guardedConnect({ host, address, port: s.port, allowPrivate: s.allowPrivate, timeoutMs }),
      host,
      port: s.port,
      secure: false,
      opportunisticTLS: true,
      tls: { rejectUnauthorized: false },
      name: s.clientName,
      maxConnections: s.maxConnections,
      connectionTimeout: s.timeoutMs,
      greetingTimeout: s.timeoutMs,
      socketTimeout: s.timeoutMs,
    }));
  }
}

/** The server could not be reached (no SMTP reply at all) or is closing (421): try the next one. */
function shouldTryNext(results: RecipientResult[]): boolean {
  return results.every(
    (r) => !r.ok && r.failure.kind === 'temporary' && (r.failure.responseCode ?? 421) === 421,
  );
}

function failAll(envelope: Envelope, failure: DeliveryFailure): RecipientResult[] {
  return envelope.to.map((email) => ({ email, ok: false, failure }));
}

/** The answer, or null when `deadline` (epoch ms) passes first. */
function beforeDeadline(p: Promise<MxAnswer>, deadline: number): Promise<MxAnswer | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), Math.max(0, deadline - Date.now()));
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}
