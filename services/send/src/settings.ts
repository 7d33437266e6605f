import {
  type Config,
  bounceDomain,
  commaList,
  flag,
  optionalUrl,
  parseSettings,
  port,
  positiveInt,
  secondsList,
  trackingBaseUrl,
} from '@mailyard/platform';
import {
  ProviderEnvObject,
  type ProviderSettings,
  providerEnvCheck,
  providerSettings,
} from '@mailyard/providers';
import { z } from 'zod';

/** The send service's configuration, derived from the environment (docs/configuration.md "Send service"). */
export interface SendSettings {
  maxAttempts: number;
  /** Seconds before attempt n+1, indexed by n-1; the last value repeats when the list is short. */
  retryDelaysS: number[];
  serviceDomain: string;
  /** Domain of VERP return paths and the mailto unsubscribe address (BOUNCE_DOMAIN, default SERVICE_DOMAIN). */
  bounceDomain: string;
  relayUrl?: string;
  mxPort: number;
  dnsServers: string[];
  dnsTimeoutMs: number;
  dnsTries: number;
  phishingBlocklist: string[];
  concurrency: number;
  smtpTimeoutMs: number;
  mxConnections: number;
  poolConnections: number;
  /** Total deadline of one direct-MX delivery to a domain (SEND_MX_DELIVERY_TIMEOUT_MS). */
  mxDeliveryTimeoutMs: number;
  /** Estimated bytes of copies in flight at once (SEND_INFLIGHT_BYTES). */
  inflightBytes: number;
  /**
   * Most email events in one bus message (SEND_EVENTS_PER_MESSAGE): the events of one tenant and
   * type recorded by one group commit share a message; 1 publishes one per event (the shape
   * webhook dispatchers before `email.event` version 2 read).
   */
  eventsPerMessage: number;
  /** Phishing check budget (PHISHING_CHECK_BUDGET_MS, PHISHING_MAX_LINKS). */
  phishingBudgetMs: number;
  phishingMaxLinks: number;
  /** smtp mailers may point at private/loopback hosts (MAILER_ALLOW_PRIVATE_HOSTS). */
  allowPrivateHosts: boolean;
  /** direct-to-MX delivery may reach private/loopback MX addresses (MX_ALLOW_PRIVATE_HOSTS). */
  mxAllowPrivateHosts: boolean;
  /** Public origin of the tracking service (TRACKING_BASE_URL), for tracked sends. */
  trackingBaseUrl: string;
  /**
   * OAuth mailers (libs/providers, docs/oauth.md): the Gmail API and Graph endpoints, the token
   * endpoints and deployment apps the token refresh uses, the refresh margin and waits.
   */
  providers: ProviderSettings;
}

/**
 * The send service's own variables (docs/configuration.md "Send service"), plus the providers' (OAuth mailers
 * send through the Gmail API / Graph with tokens it refreshes); the core ones come from Config.
 */
export const SendEnvObject = z.object({
  SEND_MAX_ATTEMPTS: positiveInt(5),
  SEND_RETRY_DELAYS: secondsList('60,300,1800,7200'),
  SMTP_RELAY_URL: optionalUrl(['smtp', 'smtps']),
  MX_PORT: port(25),
  /** Lets direct-to-MX delivery reach private, loopback or link-local MX addresses (tests, private networks). */
  MX_ALLOW_PRIVATE_HOSTS: flag,
  PHISHING_BLOCKLIST: commaList('must be a comma-separated list of domain names', (s) =>
    /^(?=.{1,253}$)[a-z0-9_-]+(\.[a-z0-9_-]+)*$/i.test(s),
  ).transform((items) => items.map((s) => s.toLowerCase())),
  SEND_CONCURRENCY: positiveInt(64),
  SEND_SMTP_TIMEOUT_MS: positiveInt(30_000),
  SEND_MX_CONNECTIONS: positiveInt(2),
  SEND_POOL_CONNECTIONS: positiveInt(8),
  /** Total time of one direct-MX delivery to a recipient domain: DNS and every MX/address tried. */
  SEND_MX_DELIVERY_TIMEOUT_MS: positiveInt(300_000),
  /** Bytes of copies being built and delivered at once (estimated from the stored request). */
  SEND_INFLIGHT_BYTES: positiveInt(256 * 1024 * 1024),
  /** Email events per bus message (docs/events.md "Events on the bus"); 1 = one message per event. */
  SEND_EVENTS_PER_MESSAGE: positiveInt(100),
  /** Phishing check: active scan time per copy, and links per copy, before it is refused. */
  PHISHING_CHECK_BUDGET_MS: positiveInt(2_000),
  PHISHING_MAX_LINKS: positiveInt(10_000),
});

export const SendEnvSchema = SendEnvObject.merge(ProviderEnvObject).superRefine(providerEnvCheck);

/** Parses the send service's variables from `config.env`; a bad value throws one ConfigError line. */
export function sendSettings(config: Config): SendSettings {
  const env = parseSettings(SendEnvSchema, config.env);
  return {
    maxAttempts: env.SEND_MAX_ATTEMPTS,
    retryDelaysS: env.SEND_RETRY_DELAYS,
    serviceDomain: config.SERVICE_DOMAIN,
    bounceDomain: bounceDomain(config),
    ...(env.SMTP_RELAY_URL ? { relayUrl: env.SMTP_RELAY_URL } : {}),
    mxPort: env.MX_PORT,
    dnsServers: config.DNS_SERVERS,
    dnsTimeoutMs: config.DNS_TIMEOUT_MS,
    dnsTries: config.DNS_TRIES,
    phishingBlocklist: env.PHISHING_BLOCKLIST,
    concurrency: env.SEND_CONCURRENCY,
    smtpTimeoutMs: env.SEND_SMTP_TIMEOUT_MS,
    mxConnections: env.SEND_MX_CONNECTIONS,
    poolConnections: env.SEND_POOL_CONNECTIONS,
    allowPrivateHosts: config.MAILER_ALLOW_PRIVATE_HOSTS,
    mxAllowPrivateHosts: env.MX_ALLOW_PRIVATE_HOSTS,
    trackingBaseUrl: trackingBaseUrl(config),
    mxDeliveryTimeoutMs: env.SEND_MX_DELIVERY_TIMEOUT_MS,
    inflightBytes: env.SEND_INFLIGHT_BYTES,
    eventsPerMessage: env.SEND_EVENTS_PER_MESSAGE,
    phishingBudgetMs: env.PHISHING_CHECK_BUDGET_MS,
    phishingMaxLinks: env.PHISHING_MAX_LINKS,
    providers: providerSettings(config),
  };
}

/** Delay before attempt `attempt + 1`, in milliseconds. */
export function retryDelayMs(s: Pick<SendSettings, 'retryDelaysS'>, attempt: number): number {
  const list = s.retryDelaysS.length > 0 ? s.retryDelaysS : [60];
  const seconds = list[Math.min(attempt - 1, list.length - 1)] ?? 60;
  return Math.round(seconds * 1000);
}
