import { type Config, trackingBaseUrl } from '@mailyard/platform';

/** The send service's configuration, derived from the environment (README "Send service"). */
export interface SendSettings {
  maxAttempts: number;
  /** Seconds before attempt n+1, indexed by n-1; the last value repeats when the list is short. */
  retryDelaysS: number[];
  serviceDomain: string;
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
  /** Phishing check budget (PHISHING_CHECK_BUDGET_MS, PHISHING_MAX_LINKS). */
  phishingBudgetMs: number;
  phishingMaxLinks: number;
  /** smtp mailers may point at private/loopback hosts (MAILER_ALLOW_PRIVATE_HOSTS). */
  allowPrivateHosts: boolean;
  /** direct-to-MX delivery may reach private/loopback MX addresses (MX_ALLOW_PRIVATE_HOSTS). */
  mxAllowPrivateHosts: boolean;
  /** Public origin of the tracking service (TRACKING_BASE_URL), for tracked sends. */
  trackingBaseUrl: string;
}

export function sendSettings(config: Config): SendSettings {
  return {
    maxAttempts: config.SEND_MAX_ATTEMPTS,
    retryDelaysS: config.SEND_RETRY_DELAYS,
    serviceDomain: config.SERVICE_DOMAIN,
    ...(config.SMTP_RELAY_URL ? { relayUrl: config.SMTP_RELAY_URL } : {}),
    mxPort: config.MX_PORT,
    dnsServers: config.DNS_SERVERS,
    dnsTimeoutMs: config.DNS_TIMEOUT_MS,
    dnsTries: config.DNS_TRIES,
    phishingBlocklist: config.PHISHING_BLOCKLIST,
    concurrency: config.SEND_CONCURRENCY,
    smtpTimeoutMs: config.SEND_SMTP_TIMEOUT_MS,
    mxConnections: config.SEND_MX_CONNECTIONS,
    poolConnections: config.SEND_POOL_CONNECTIONS,
    allowPrivateHosts: config.MAILER_ALLOW_PRIVATE_HOSTS,
    mxAllowPrivateHosts: config.MX_ALLOW_PRIVATE_HOSTS,
    trackingBaseUrl: trackingBaseUrl(config),
    mxDeliveryTimeoutMs: config.SEND_MX_DELIVERY_TIMEOUT_MS,
    inflightBytes: config.SEND_INFLIGHT_BYTES,
    phishingBudgetMs: config.PHISHING_CHECK_BUDGET_MS,
    phishingMaxLinks: config.PHISHING_MAX_LINKS,
  };
}

/** Delay before attempt `attempt + 1`, in milliseconds. */
export function retryDelayMs(s: Pick<SendSettings, 'retryDelaysS'>, attempt: number): number {
  const list = s.retryDelaysS.length > 0 ? s.retryDelaysS : [60];
  const seconds = list[Math.min(attempt - 1, list.length - 1)] ?? 60;
  return Math.round(seconds * 1000);
}
