import { type SendProvider, type SendingMailer, sendProviderOf } from '@mailyard/contracts';
import type { SendSettings } from '../settings';
import { MxResolver } from './mx-resolver';
import { MxTransport } from './mx-transport';
import { PoolCache } from './pool-cache';
import { RelayTransport } from './relay';
import { SmtpMailerTransport } from './smtp-transport';
import type { MessageTransport } from './types';

export type { Envelope, MessageTransport, RecipientResult } from './types';

/** Makes the transport of one mailer whose provider this entry serves. */
type TransportEntry = (mailer: SendingMailer) => MessageTransport;

/**
 * Picks the transport for a mailer by its send provider (libs/contracts mailers/capabilities.ts):
 * `mx` (domain mailers) goes through SMTP_RELAY_URL when set, else straight to the recipients'
 * MX; `smtp` through the mailer's own server. A Gmail API or Microsoft Graph transport is one
 * more entry under `gmail` / `graph`. Owns every pool. Connections to tenant-chosen targets (SMTP
 * mailer hosts, recipients' MX) go through the platform's guarded connect; the relay is the
 * operator's own configuration and is not guarded.
 */
export class Transports {
  readonly pools: PoolCache;
  private readonly byProvider: Partial<Record<SendProvider, TransportEntry>>;

  constructor(private readonly s: SendSettings) {
    // Overall deadline of one delivery: connect + greeting + a slow DATA, queueing included.
    this.pools = new PoolCache({ deliveryTimeoutMs: s.smtpTimeoutMs * 4 });
    const resolver = new MxResolver({ servers: s.dnsServers, timeoutMs: s.dnsTimeoutMs, tries: s.dnsTries });
    const mx = new MxTransport(this.pools, resolver, {
      port: s.mxPort,
      timeoutMs: s.smtpTimeoutMs,
      deliveryTimeoutMs: s.mxDeliveryTimeoutMs,
      maxConnections: s.mxConnections,
      clientName: s.serviceDomain,
      allowPrivate: s.mxAllowPrivateHosts,
    });
    const relay = s.relayUrl
      ? new RelayTransport(this.pools, {
          url: s.relayUrl,
          timeoutMs: s.smtpTimeoutMs,
          maxConnections: s.poolConnections,
          clientName: s.serviceDomain,
        })
      : null;
    const direct = relay ?? mx;
    this.byProvider = {
      mx: () => direct,
      smtp: (mailer) => this.smtpMailer(mailer),
    };
  }

  /** True when a transport serves this mailer's provider (OAuth senders have none yet). */
  supports(mailer: SendingMailer): boolean {
    const provider = sendProviderOf(mailer);
    return provider !== null && this.byProvider[provider] !== undefined;
  }

  for(mailer: SendingMailer): MessageTransport {
    const provider = sendProviderOf(mailer);
    const entry = provider === null ? undefined : this.byProvider[provider];
    if (!entry) throw new Error(`No transport for ${mailer.configType} mailers`);
    return entry(mailer);
  }

  private smtpMailer(mailer: SendingMailer): MessageTransport {
    if (mailer.kind !== 'smtp')
      throw new Error(`No SMTP settings for ${mailer.configType} mailer ${mailer.id}`);
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
