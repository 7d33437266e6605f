import { type SendProvider, type SendingMailer, sendProviderOf } from '@mailyard/contracts';
import { type GuardedAgents, guardedAgents } from '@mailyard/platform';
import type { OAuthAccessTokens } from '@mailyard/providers';
import { PoolCache, SparkPostClient } from '@mailyard/providers';
import type { SendSettings } from '../settings';
import { sliced } from '../slices';
import { GmailTransport } from './gmail-transport';
import { GraphTransport } from './graph-transport';
import { MxResolver } from './mx-resolver';
import { MxTransport } from './mx-transport';
import { RelayTransport } from './relay';
import { SmtpMailerTransport } from './smtp-transport';
import { SparkPostTransport } from './sparkpost-transport';
import type { MessageTransport } from './types';

export type { MessageTransport } from './types';

/** Makes the transport of one mailer whose provider this entry serves. */
type TransportEntry = (mailer: SendingMailer) => MessageTransport;

/** API transports kept per mailer (a googleapis client each): at most this many. */
const MAX_API_TRANSPORTS = 10_000;

/**
 * Picks the transport for a mailer by its send provider (libs/contracts mailers/capabilities.ts):
 * `mx` (domain mailers) goes through SMTP_RELAY_URL when set, else straight to the recipients'
 * MX; `smtp` through the mailer's own server; `gmail` / `graph` (OAuth mailers, by their grant's
 * provider) through the Gmail API / Microsoft Graph with the mailer's token source (`tokens`,
 * libs/providers: refreshed ahead of expiry, refreshed again when the API refuses a token, a
 * revoked grant deactivating the mailer); `sparkpost` through SparkPost's Transmissions API with
 * the mailer's API key. Owns every pool. Connections to tenant-chosen targets (SMTP mailer hosts,
 * recipients' MX, a SparkPost mailer's own `base_url`) go through the platform's guarded connect
 * with the mailer rules (MAILER_ALLOW_PRIVATE_HOSTS); the relay and the provider endpoints are the
 * operator's own configuration (SPARKPOST_API_URL goes through guarded agents that allow it as
 * configured).
 */
export class Transports {
  readonly pools: PoolCache;
  private readonly byProvider: Partial<Record<SendProvider, TransportEntry>>;
  private readonly api = new Map<string, MessageTransport>();
  /** HTTP agents for a tenant's SparkPost base_url, and for the operator's SPARKPOST_API_URL. */
  private readonly tenantAgents: GuardedAgents;
  private readonly operatorAgents: GuardedAgents;

  constructor(
    private readonly s: SendSettings,
    private readonly tokens: OAuthAccessTokens,
  ) {
    // Overall deadline of one delivery: connect + greeting + a slow DATA, queueing included.
    this.pools = new PoolCache({ deliveryTimeoutMs: s.smtpTimeoutMs * 4, source: sliced });
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
    const { GMAIL_API_URL, MICROSOFT_GRAPH_URL, SPARKPOST_API_URL } = s.providers;
    const keepAlive = { keepAlive: true, maxSockets: s.poolConnections * 4 };
    this.tenantAgents = guardedAgents({
      allowPrivate: s.allowPrivateHosts,
      dns: { DNS_SERVERS: s.dnsServers, DNS_TIMEOUT_MS: s.dnsTimeoutMs, DNS_TRIES: s.dnsTries },
      agent: keepAlive,
    });
    this.operatorAgents = guardedAgents({ allowPrivate: true, agent: keepAlive });
    this.byProvider = {
      mx: () => direct,
      smtp: (mailer) => this.smtpMailer(mailer),
      gmail: (mailer) =>
        this.apiTransport(
          mailer,
          'gmail',
          (tokens) => new GmailTransport(mailer, tokens, { apiUrl: GMAIL_API_URL }),
        ),
      graph: (mailer) =>
        this.apiTransport(
          mailer,
          'graph',
          (tokens) => new GraphTransport(mailer, tokens, { graphUrl: MICROSOFT_GRAPH_URL }),
        ),
      sparkpost: (mailer) => this.sparkPost(mailer, SPARKPOST_API_URL),
    };
  }

  /** True when a transport serves this mailer's provider (an OAuth mailer without a grant has none). */
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

  /**
   * A SparkPost mailer's transport (cheap: the agents are shared, so made per delivery and never
   * stale after the key or base_url changed).
   */
  private sparkPost(mailer: SendingMailer, operatorBase: string): MessageTransport {
    if (mailer.kind !== 'sparkpost')
      throw new Error(`No SparkPost settings for ${mailer.configType} mailer ${mailer.id}`);
    const { apiKey, baseUrl } = mailer.sparkpost;
    return new SparkPostTransport(
      new SparkPostClient({
        apiKey,
        baseUrl: baseUrl ?? operatorBase,
        agents: baseUrl ? this.tenantAgents : this.operatorAgents,
        timeoutMs: this.s.smtpTimeoutMs * 4,
      }),
    );
  }

  /** The mailer's API transport, made once (its token source and client are per mailer). */
  private apiTransport(
    mailer: SendingMailer,
    provider: 'gmail' | 'graph',
    make: (tokens: ReturnType<OAuthAccessTokens['forMailer']>) => MessageTransport,
  ): MessageTransport {
    const key = `${mailer.tenantId}\u0000${mailer.id}\u0000${provider}`;
    let transport = this.api.get(key);
    if (!transport) {
      if (this.api.size >= MAX_API_TRANSPORTS) this.api.clear();
      transport = make(this.tokens.forMailer(mailer.tenantId, mailer.id));
      this.api.set(key, transport);
    }
    return transport;
  }

  close(): void {
    this.pools.closeAll();
    for (const a of [this.tenantAgents, this.operatorAgents]) {
      a.http.destroy();
      a.https.destroy();
    }
  }
}
