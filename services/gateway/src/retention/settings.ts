/**
 * The retention settings (docs/configuration.md "Gateway", docs/operations.md "Retention"): how
 * long each kind of row is kept and how often the gateway's sweeper removes what has expired.
 * Durations are written as a number and s, m, h or d (libs/platform `duration`); each is read as
 * milliseconds. Merged into the gateway's settings (settings.ts), so a bad value is the gateway's
 * one ConfigError line at start.
 */
import { duration } from '@mailyard/platform';
import { z } from 'zod';

export const RetentionEnvObject = z.object({
  /** Email logs (and, once all of a send's logs are gone, the send with its stored request). */
  RETENTION_LOGS: duration('30d'),
  /** Email events. */
  RETENTION_EVENTS: duration('30d'),
  /** Inbound raw messages already handed to the dispatcher. */
  RETENTION_INBOUND_RAW: duration('7d'),
  /** Finished webhook deliveries (delivered or dropped) with their attempts. */
  RETENTION_WEBHOOK_DELIVERIES: duration('30d'),
  /** The audit log. */
  RETENTION_AUDIT: duration('365d'),
  /** DMARC aggregate and TLS-RPT reports, counted from when the MX received them. */
  RETENTION_REPORTS: duration('180d'),
  /** How often the sweeper runs (one replica per pass, leased). */
  RETENTION_SWEEP_INTERVAL: duration('1h'),
});

export type RetentionSettings = z.infer<typeof RetentionEnvObject>;
