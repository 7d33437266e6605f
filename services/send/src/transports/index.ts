import type { SendingMailer } from '@mailyard/contracts';
import type { SendSettings } from '../settings';
import { MxResolver } from './mx-resolver';
import { MxTransport } from './mx-transport';
import { PoolCache } from './pool-cache';
import { RelayTransport } from './relay';
import { SmtpMailerTransport } from './smtp-transport';
import type { MessageTransport } from './types';

export type { Envelope, MessageTransport, RecipientResult } from './types';

/**
 * Picks the transport for a mailer: domain mailers go through SMTP_RELAY_URL when set, else
 * straight to the recipients' MX; SMTP mailers through their own server. Owns every pool.
 * Connections to tenant-chosen targets (SMTP mailer hosts, recipients' MX) go through the
 * platform's guarded connect; the relay is the operator's own configuration and is not guarded.
 */
export class Transports {
  readonly pools: PoolCache;
  private readonly mx: MxTransport;
  private readonly relay: RelayTransport | null;

  constructor(private readonly s: SendSettings) {
    // Overall deadline of one delivery: connect + greeting + a slow DATA, queueing included.
    this.pools = new PoolCache({ deliveryTimeoutMs: s.smtpTimeoutMs * 4 });
    const resolver = new MxResolver({ servers: s.dnsServers, timeoutMs: s.dnsTimeoutMs, tries: s.dnsTries });
    this.mx = new MxTransport(this.pools, resolver, {
      port: s.mxPort,
      timeoutMs: s.smtpTimeoutMs,
      deliveryTimeoutMs: s.mxDeliveryTimeoutMs,
      maxConnections: s.mxConnections,
      clientName: s.serviceDomain,
      allowPrivate: s.mxAllowPrivateHosts,
    });
    this.relay = s.relayUrl
      ? new RelayTransport(this.pools, {
          url: s.relayUrl,
          timeoutMs: s.smtpTimeoutMs,
          maxConnections: s.poolConnections,
          clientName: s.serviceDomain,
        })
      : null;
  }

  /** True when domain mailers deliver through the relay (its auth failures are not the mailer's). */
  get usesRelay(): boolean {
    return this.relay !== null;
  }

  for(mailer: SendingMailer): MessageTransport {
    if (mailer.kind === 'domain') return this.relay ?? this.mx;
    return new SmtpMailerTransport(this.pools, mailer.id, mailer.smtp, {
      timeoutMs: this.s.smtpTimeoutMs,
      maxConnections: this.s.poolConnections,
      clientName: this.s.serviceDomain,
      guard: {
        allowPrivate: this.s.allowPrivateHosts,
        dns: {
          DNS_SERVERS: this.s.dnsServers,
          DNS_TIMEOUT_MS: this.s.dnsTimeoutMs,
          DNS_TRIES: this.s.dnsTries,
        },
      },
    });
  }

  close(): void {
    this.pools.closeAll();
  }
}
