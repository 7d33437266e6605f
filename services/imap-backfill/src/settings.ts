/**
 * The imap-backfill service's configuration (docs/backfill.md), its own zod schema beside the
 * shared Config (MAILER_ALLOW_PRIVATE_HOSTS and DNS_* for the guarded connect):
 *
 * - `BACKFILL_POLL_MS` (1000): how often idle workers look for due jobs.
 * - `BACKFILL_CONCURRENCY` (4): jobs run at once per process (one IMAP connection each).
 * - `BACKFILL_LEASE_MS` (60000): a job's lease; a killed worker's job resumes after it expires.
 * - `BACKFILL_SLICE_DAYS` (7): first and shortest time slice of the newest-first walk.
 * - `BACKFILL_SLICE_TARGET` (1000): messages a slice aims at; slices grow over sparse stretches
 *   (up to a tenth of the window) and shrink over dense ones.
 * - `BACKFILL_RETRY_MAX` (8): transient failures in a row before a job fails.
 * - `BACKFILL_RETRY_BASE_MS` (2000): first retry delay; doubles up to 5 minutes.
 * - `BACKFILL_FETCH_BATCH` (500): UIDs per IMAP FETCH command (sources stream one at a time).
 * - `BACKFILL_INFLIGHT` (16): messages of a job parsed and posted at once.
 * - `BACKFILL_INFLIGHT_BYTES` (8388608, 8 MiB): source bytes of a job's messages between fetch
 *   and broker confirm; large messages go through fewer at a time (one alone when larger).
 * - `BACKFILL_CHECKPOINT_EVERY` (200): messages between checkpoints (what a restart re-posts at most).
 * - `IMAP_TIMEOUT_MS` (15000): connect/greeting timeout of IMAP connections; a login may take
 *   three times it in all.
 * - `IMAP_COMMAND_TIMEOUT_MS` (300000): the longest an IMAP command may go without its answer,
 *   and a FETCH without delivering its next message (then the connection is dropped: a
 *   transient failure).
 * - `IMAP_MAX_MESSAGE_BYTES` (26214400, the MX's INBOUND_MAX_MESSAGE_BYTES): the largest message
 *   read from a mailbox; a larger one is not read (at most this many bytes and one more) and is
 *   posted as the INCOMING_EMAIL error form saying so. Also the largest literal an IMAP server
 *   may send (libs/providers imap/limits.ts).
 * - `IMAP_SYNC` (1): live sync of IMAP-capable mailers on/off.
 * - `IMAP_SYNC_POLL_MS` (60000): re-check interval while idling (and polling without IDLE).
 * - `IMAP_SYNC_LEASE_MS` (30000): Redis lease per watched mailer, renewed by its watcher.
 * - `IMAP_SYNC_ERROR_AFTER` (3): failed connects in a row before an IMAP_ERROR event.
 * - `IMAP_SYNC_RETRY_BASE_MS` (2000): first reconnect delay of a watcher; doubles up to 5 minutes.
 * - `BACKFILL_API_CONCURRENCY` (4): Gmail API / Graph requests in flight per OAuth mailbox
 *   (message metadata and sources; the providers' per-user quotas bound it).
 * - The providers' variables (libs/providers ProviderEnvObject: API endpoints, deployment apps,
 *   token lifecycle) for the OAuth mailboxes' tokens and API clients.
 */
import {
  type Config,
  atLeast,
  flagOn,
  integer,
  parseSettings,
  positiveInt,
  positiveNumber,
} from '@mailyard/platform';
import { ProviderEnvObject, type ProviderSettings, providerEnvCheck } from '@mailyard/providers';
import { z } from 'zod';

export const BackfillEnvSchema = z
  .object({
    BACKFILL_POLL_MS: atLeast(10, 1000),
    BACKFILL_CONCURRENCY: positiveInt(4),
    BACKFILL_LEASE_MS: atLeast(1000, 60_000),
    BACKFILL_SLICE_DAYS: positiveNumber(7),
    BACKFILL_SLICE_TARGET: positiveInt(1000),
    BACKFILL_RETRY_MAX: positiveInt(8),
    BACKFILL_RETRY_BASE_MS: positiveInt(2000),
    BACKFILL_FETCH_BATCH: positiveInt(500),
    BACKFILL_INFLIGHT: positiveInt(16),
    BACKFILL_INFLIGHT_BYTES: atLeast(1024, 8 * 1024 * 1024),
    BACKFILL_CHECKPOINT_EVERY: positiveInt(200),
    IMAP_TIMEOUT_MS: atLeast(100, 15_000),
    IMAP_COMMAND_TIMEOUT_MS: integer('must be an integer of milliseconds from 1000', 1000).default(300_000),
    IMAP_MAX_MESSAGE_BYTES: integer(
      'must be a byte count from 1024 to 1073741823',
      1024,
      2 ** 30 - 1,
    ).default(25 * 1024 * 1024),
    IMAP_SYNC: flagOn,
    IMAP_SYNC_POLL_MS: atLeast(10, 60_000),
    IMAP_SYNC_LEASE_MS: atLeast(1000, 30_000),
    IMAP_SYNC_ERROR_AFTER: positiveInt(3),
    IMAP_SYNC_RETRY_BASE_MS: positiveInt(2000),
    BACKFILL_API_CONCURRENCY: positiveInt(4),
  })
  // OAuth mailboxes: provider endpoints, the deployment's apps, token lifecycle (libs/providers).
  .merge(ProviderEnvObject)
  .superRefine(providerEnvCheck);

const PROVIDER_KEYS = Object.keys(ProviderEnvObject.shape) as Array<keyof ProviderSettings>;

export interface BackfillSettings {
  pollMs: number;
  concurrency: number;
  leaseMs: number;
  sliceMs: number;
  sliceTarget: number;
  retryMax: number;
  retryBaseMs: number;
  fetchBatch: number;
  inFlight: number;
  inFlightBytes: number;
  checkpointEvery: number;
  imapTimeoutMs: number;
  imapCommandTimeoutMs: number;
  /** The largest message read from a mailbox (larger ones are posted as the error form). */
  maxMessageBytes: number;
  sync: boolean;
  syncPollMs: number;
  syncLeaseMs: number;
  syncErrorAfter: number;
  syncRetryBaseMs: number;
  apiConcurrency: number;
  /** The OAuth providers' settings (libs/providers). */
  providers: ProviderSettings;
  guard: {
    allowPrivate: boolean;
    dns: { DNS_SERVERS: Config['DNS_SERVERS']; DNS_TIMEOUT_MS: number; DNS_TRIES: number };
  };
}

/**
 * Parses the service's variables from `config.env`; a bad value throws one ConfigError line.
 * Empty values mean "use the default", as for every other variable (a Kubernetes ConfigMap lists
 * them empty).
 */
export function backfillSettings(config: Config): BackfillSettings {
  const e = parseSettings(BackfillEnvSchema, config.env);
  return {
    pollMs: e.BACKFILL_POLL_MS,
    concurrency: e.BACKFILL_CONCURRENCY,
    leaseMs: e.BACKFILL_LEASE_MS,
    sliceMs: Math.max(1000, Math.round(e.BACKFILL_SLICE_DAYS * 86_400_000)),
    sliceTarget: e.BACKFILL_SLICE_TARGET,
    retryMax: e.BACKFILL_RETRY_MAX,
    retryBaseMs: e.BACKFILL_RETRY_BASE_MS,
    fetchBatch: e.BACKFILL_FETCH_BATCH,
    inFlight: e.BACKFILL_INFLIGHT,
    inFlightBytes: e.BACKFILL_INFLIGHT_BYTES,
    checkpointEvery: e.BACKFILL_CHECKPOINT_EVERY,
    imapTimeoutMs: e.IMAP_TIMEOUT_MS,
    imapCommandTimeoutMs: e.IMAP_COMMAND_TIMEOUT_MS,
    maxMessageBytes: e.IMAP_MAX_MESSAGE_BYTES,
    sync: e.IMAP_SYNC,
    syncPollMs: e.IMAP_SYNC_POLL_MS,
    syncLeaseMs: e.IMAP_SYNC_LEASE_MS,
    syncErrorAfter: e.IMAP_SYNC_ERROR_AFTER,
    syncRetryBaseMs: e.IMAP_SYNC_RETRY_BASE_MS,
    apiConcurrency: e.BACKFILL_API_CONCURRENCY,
    providers: Object.fromEntries(PROVIDER_KEYS.map((k) => [k, e[k]])) as ProviderSettings,
    guard: {
      allowPrivate: config.MAILER_ALLOW_PRIVATE_HOSTS,
      dns: {
        DNS_SERVERS: config.DNS_SERVERS,
        DNS_TIMEOUT_MS: config.DNS_TIMEOUT_MS,
        DNS_TRIES: config.DNS_TRIES,
      },
    },
  };
}
