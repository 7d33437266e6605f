/**
 * The submission service's configuration (docs/configuration.md "SMTP submission"), through the
 * platform's config fields (a bad value is one ConfigError line):
 * - SUBMISSION_PORT (2587): STARTTLS listener; SUBMISSION_TLS_PORT: implicit TLS (465) when set.
 * - SUBMISSION_TLS_CERT / SUBMISSION_TLS_KEY: PEM files; unset: a self-signed certificate made at
 *   first start and kept in DATA_DIR (tls-cert.ts).
 * - SUBMISSION_ALLOW_INSECURE_AUTH (false): AUTH before TLS (development only).
 * - SUBMISSION_MAX_BYTES (26214400): message size; larger gets 552 after the final dot.
 * - SUBMISSION_MAX_RECIPIENTS (100): RCPTs per message; beyond: 452 4.5.3.
 * - SUBMISSION_MAX_CLIENTS (100), SUBMISSION_SOCKET_TIMEOUT_MS (60000: idle time between
 *   commands), SUBMISSION_DATA_TIMEOUT_MS (300000: 354 to the final dot).
 * - SUBMISSION_AUTH_FAILURES (5) per SUBMISSION_AUTH_FAILURE_WINDOW_SECONDS (600) per client
 *   address (IPv6 by /64): past it AUTH answers 454 until the window ends.
 * - SUBMISSION_HOSTNAME: greeting name (default SERVICE_DOMAIN).
 * - RATE_LIMIT_STANDARD / _ENTERPRISE / _WINDOW_SECONDS: the API's per-tenant budget, shared.
 */
import {
  type Config,
  RateLimitEnvFields,
  type RateLimitOptions,
  atLeast,
  fileContents,
  integer,
  parseSettings,
  positiveInt,
  rateLimitOptions,
  setTogether,
} from '@mailyard/platform';
import { z } from 'zod';

export const SubmissionEnvSchema = z
  .object({
    SUBMISSION_PORT: integer('must be a port number from 0 to 65535', 0, 65535).default(2587),
    SUBMISSION_TLS_PORT: integer('must be a port number from 0 to 65535', 0, 65535).optional(),
    SUBMISSION_TLS_CERT: fileContents.optional(),
    SUBMISSION_TLS_KEY: fileContents.optional(),
    SUBMISSION_ALLOW_INSECURE_AUTH: z.enum(['0', '1', 'true', 'false']).default('0'),
    SUBMISSION_MAX_BYTES: atLeast(1024, 25 * 1024 * 1024),
    SUBMISSION_MAX_RECIPIENTS: integer('must be an integer from 1 to 1000', 1, 1000).default(100),
    SUBMISSION_MAX_CLIENTS: positiveInt(100),
    SUBMISSION_SOCKET_TIMEOUT_MS: atLeast(1000, 60_000),
    SUBMISSION_DATA_TIMEOUT_MS: atLeast(1000, 300_000),
    SUBMISSION_AUTH_FAILURES: positiveInt(5),
    SUBMISSION_AUTH_FAILURE_WINDOW_SECONDS: positiveInt(600),
    SUBMISSION_HOSTNAME: z.string().optional(),
    ...RateLimitEnvFields,
  })
  .superRefine(setTogether([['SUBMISSION_TLS_CERT', 'SUBMISSION_TLS_KEY']]));

export interface SubmissionSettings {
  port: number;
  tlsPort: number | null;
  host: string;
  hostname: string;
  tls: { key: Buffer; cert: Buffer } | null;
  dataDir: string;
  allowInsecureAuth: boolean;
  maxBytes: number;
  maxRecipients: number;
  maxClients: number;
  socketTimeoutMs: number;
  dataTimeoutMs: number;
  authFailures: number;
  authFailureWindowMs: number;
  rateLimit: RateLimitOptions;
}

export function submissionSettings(config: Config): SubmissionSettings {
  const s = parseSettings(SubmissionEnvSchema, config.env);
  return {
    port: s.SUBMISSION_PORT,
    tlsPort: s.SUBMISSION_TLS_PORT ?? null,
    host: config.HOST,
    hostname: s.SUBMISSION_HOSTNAME ?? config.SERVICE_DOMAIN,
    tls:
      s.SUBMISSION_TLS_CERT && s.SUBMISSION_TLS_KEY
        ? { cert: s.SUBMISSION_TLS_CERT, key: s.SUBMISSION_TLS_KEY }
        : null,
    dataDir: config.DATA_DIR,
    allowInsecureAuth:
      s.SUBMISSION_ALLOW_INSECURE_AUTH === '1' || s.SUBMISSION_ALLOW_INSECURE_AUTH === 'true',
    maxBytes: s.SUBMISSION_MAX_BYTES,
    maxRecipients: s.SUBMISSION_MAX_RECIPIENTS,
    maxClients: s.SUBMISSION_MAX_CLIENTS,
    socketTimeoutMs: s.SUBMISSION_SOCKET_TIMEOUT_MS,
    dataTimeoutMs: s.SUBMISSION_DATA_TIMEOUT_MS,
    authFailures: s.SUBMISSION_AUTH_FAILURES,
    authFailureWindowMs: s.SUBMISSION_AUTH_FAILURE_WINDOW_SECONDS * 1000,
    rateLimit: rateLimitOptions(s),
  };
}
