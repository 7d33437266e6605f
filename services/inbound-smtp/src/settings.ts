/**
 * The MX service's configuration: the shared Config (SMTP_PORT, HOST, SERVICE_DOMAIN,
 * DNS_SERVERS) plus its own variables (docs/inbound.md), through the platform's config fields
 * (parseSettings: a bad value is one ConfigError line naming the variable):
 * - INBOUND_MAX_MESSAGE_BYTES (default 26214400): announced in EHLO SIZE; larger mail gets 552
 *   at the end of DATA, and nothing past the limit is held while it streams in.
 * - INBOUND_MAX_INFLIGHT_BYTES (default 4 x INBOUND_MAX_MESSAGE_BYTES, at least that limit):
 *   message bytes held across all sessions while they are received and stored; a message that
 *   would go past it gets `452 4.3.1` (try again later).
 * - INBOUND_MAX_RECIPIENTS (100): recipients per message; beyond it RCPT gets `452 4.5.3`. Also
 *   the RCPTs refused for good (5xx) one session may send before it is closed (`421 4.7.0`).
 * - INBOUND_MAX_CLIENTS (100) and INBOUND_MAX_PER_IP (10): concurrent connections (an IPv6
 *   client counts by its /64).
 * - INBOUND_SOCKET_TIMEOUT_MS (60000): idle timeout of a session.
 * - INBOUND_SESSION_TIMEOUT_MS (600000) and INBOUND_DATA_TIMEOUT_MS (300000): deadlines of a
 *   whole session and of one DATA (354 to the final dot), however steadily the client trickles.
 * - INBOUND_TLS_CERT / INBOUND_TLS_KEY: PEM files for STARTTLS; unset uses smtp-server's
 *   built-in self-signed certificate (development only: a warning is logged in production).
 * - INBOUND_HOSTNAME: name in the greeting and Authentication-Results (default SERVICE_DOMAIN).
 * - BOUNCE_DOMAIN (shared with the send service, default SERVICE_DOMAIN): the domain of the
 *   service's own addresses (VERP return paths, `fbl@`, mailto unsubscribes, `dmarc@` and
 *   `tls-rpt@`, which SERVICE_DOMAIN also holds).
 * - INBOUND_DNS_CACHE_MS (30000): how long authentication keeps DNS answers (0: not at all).
 * - INBOUND_GREETING_DELAY_MS (0): wait before the 220 greeting; a client that talks before it
 *   gets 421 (early-talker / pregreet check). 0 greets at once and checks nothing, like Postfix
 *   (postscreen's pregreet test is off by default): a session costs no idle wait, which bounds
 *   one-message sessions (20 sessions at 100 ms: 200 messages/s at most). Set it (e.g. 1000-6000,
 *   postscreen's greet wait) to refuse bots that do not wait for the greeting.
 */
import {
  type Config,
  atLeast,
  bounceDomain,
  fileContents,
  integer,
  parseSettings,
  positiveInt,
  setTogether,
} from '@mailyard/platform';
import { z } from 'zod';

export const InboundEnvSchema = z
  .object({
    INBOUND_MAX_MESSAGE_BYTES: atLeast(1024, 25 * 1024 * 1024),
    INBOUND_MAX_INFLIGHT_BYTES: integer('must be an integer of at least 1024', 1024).optional(),
    INBOUND_MAX_RECIPIENTS: positiveInt(100),
    INBOUND_MAX_CLIENTS: positiveInt(100),
    INBOUND_MAX_PER_IP: positiveInt(10),
    INBOUND_SOCKET_TIMEOUT_MS: atLeast(1000, 60_000),
    INBOUND_SESSION_TIMEOUT_MS: atLeast(1000, 600_000),
    INBOUND_DATA_TIMEOUT_MS: atLeast(1000, 300_000),
    INBOUND_TLS_CERT: fileContents.optional(),
    INBOUND_TLS_KEY: fileContents.optional(),
    INBOUND_HOSTNAME: z.string().optional(),
    INBOUND_DNS_CACHE_MS: atLeast(0, 30_000),
    INBOUND_GREETING_DELAY_MS: integer('must be an integer from 0 to 60000', 0, 60_000).default(0),
    INBOUND_RECOVERY_LEASE_MS: atLeast(100, 30_000),
  })
  .superRefine(setTogether([['INBOUND_TLS_CERT', 'INBOUND_TLS_KEY']]))
  .superRefine((s, ctx) => {
    // The budget must hold one message of the largest size.
    if (
      s.INBOUND_MAX_INFLIGHT_BYTES !== undefined &&
      s.INBOUND_MAX_INFLIGHT_BYTES < s.INBOUND_MAX_MESSAGE_BYTES
    )
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: ['INBOUND_MAX_INFLIGHT_BYTES'],
        message: 'must be at least INBOUND_MAX_MESSAGE_BYTES',
      });
  });

export interface InboundSettings {
  port: number;
  host: string;
  hostname: string;
  /** Domain of the service's own addresses (lowercase). */
  bounceDomain: string;
  /** SERVICE_DOMAIN (lowercase): also holds the report addresses `dmarc@`, `tls-rpt@`. */
  serviceDomain: string;
  maxMessageBytes: number;
  /** Message bytes held across all sessions (receiving and storing). */
  maxInflightBytes: number;
  /** Distinct recipients per message. */
  maxRecipients: number;
  maxClients: number;
  maxPerIp: number;
  socketTimeoutMs: number;
  /** Deadline of a whole session, from the connection. */
  sessionTimeoutMs: number;
  /** Deadline of one DATA, from the 354 to the final dot. */
  dataTimeoutMs: number;
  tls: { key: Buffer; cert: Buffer } | null;
  dnsServers: string[];
  dnsTimeoutMs: number;
  dnsCacheMs: number;
  /** Milliseconds before the greeting (early-talker check); 0: none. */
  greetingDelayMs: number;
  /** A message still `stored` this long after it was received is processed by the recovery sweep. */
  recoveryLeaseMs: number;
}

/** Parses the MX's variables from `config.env`; a bad value throws one ConfigError line. */
export function inboundSettings(config: Config): InboundSettings {
  const s = parseSettings(InboundEnvSchema, config.env);
  return {
    port: config.SMTP_PORT,
    host: config.HOST,
    hostname: s.INBOUND_HOSTNAME ?? config.SERVICE_DOMAIN,
    bounceDomain: bounceDomain(config),
    serviceDomain: config.SERVICE_DOMAIN.toLowerCase(),
    maxMessageBytes: s.INBOUND_MAX_MESSAGE_BYTES,
    maxInflightBytes: s.INBOUND_MAX_INFLIGHT_BYTES ?? 4 * s.INBOUND_MAX_MESSAGE_BYTES,
    maxRecipients: s.INBOUND_MAX_RECIPIENTS,
    maxClients: s.INBOUND_MAX_CLIENTS,
    maxPerIp: s.INBOUND_MAX_PER_IP,
    socketTimeoutMs: s.INBOUND_SOCKET_TIMEOUT_MS,
    sessionTimeoutMs: s.INBOUND_SESSION_TIMEOUT_MS,
    dataTimeoutMs: s.INBOUND_DATA_TIMEOUT_MS,
    tls:
      s.INBOUND_TLS_CERT && s.INBOUND_TLS_KEY ? { cert: s.INBOUND_TLS_CERT, key: s.INBOUND_TLS_KEY } : null,
    dnsServers: config.DNS_SERVERS,
    dnsTimeoutMs: config.DNS_TIMEOUT_MS,
    dnsCacheMs: s.INBOUND_DNS_CACHE_MS,
    greetingDelayMs: s.INBOUND_GREETING_DELAY_MS,
    recoveryLeaseMs: s.INBOUND_RECOVERY_LEASE_MS,
  };
}
