/**
 * The tracking service's configuration: the shared Config (TRACKING_PORT, TRACKING_BASE_URL,
 * HOST) plus its own variables, parsed here with their own zod schema (docs/configuration.md "Tracking service", docs/tracking.md):
 *
 * - `TRACKING_TRUST_PROXY`: which proxies' X-Forwarded-For the service believes for the client
 *   IP, in Express's `trust proxy` forms: `false` (default: the socket address), `true` (the
 *   left-most address: only behind a proxy that overwrites the header), a hop count (`1`), or a
 *   comma-separated list of addresses, CIDR ranges or `loopback`/`linklocal`/`uniquelocal`.
 * - `GEOIP_DB`: path of a MaxMind-format (.mmdb) City or Country database; unset = no geo fields.
 * - `TRACKING_CALLBACK_POLL_MS`: how often the provider-callback worker looks for stored batches
 *   it was not told about (stored by another tracking process, or before a restart); default 2000.
 */
import {
  type Config,
  type TrustProxy,
  parseSettings,
  positiveInt,
  trackingBaseUrl,
  trustProxy,
} from '@mailyard/platform';
import { z } from 'zod';

export type { TrustProxy };

export const TrackingEnvSchema = z.object({
  TRACKING_TRUST_PROXY: trustProxy,
  GEOIP_DB: z
    .string()
    .trim()
    .optional()
    .transform((v) => (v ? v : undefined)),
  TRACKING_CALLBACK_POLL_MS: positiveInt(2000),
});

export interface TrackingSettings {
  port: number;
  host: string;
  /** Public origin, no trailing slash. */
  baseUrl: string;
  trustProxy: TrustProxy;
  geoipDb?: string;
  /** Milliseconds between the callback worker's looks for stored batches. */
  callbackPollMs: number;
}

/** Parses the tracking service's variables from `config.env`; a bad value is one ConfigError line. */
export function trackingSettings(config: Config): TrackingSettings {
  const parsed = parseSettings(TrackingEnvSchema, config.env);
  return {
    port: config.TRACKING_PORT,
    host: config.HOST,
    baseUrl: trackingBaseUrl(config),
    trustProxy: parsed.TRACKING_TRUST_PROXY,
    callbackPollMs: parsed.TRACKING_CALLBACK_POLL_MS,
    ...(parsed.GEOIP_DB ? { geoipDb: parsed.GEOIP_DB } : {}),
  };
}
