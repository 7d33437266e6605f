import { isIP } from 'node:net';
import { z } from 'zod';

/** Thrown for an invalid environment; its message is the one line printed before exiting. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

const integer = (message: string, min: number, max = Number.MAX_SAFE_INTEGER) =>
  z.coerce
    .number({ invalid_type_error: message })
    .refine((n) => Number.isInteger(n) && n >= min && n <= max, { message });
const port = (fallback: number) =>
  integer('must be a port number from 0 to 65535', 0, 65535).default(fallback);
const optionalUrl = (protocols: string[]) =>
  z
    .string()
    .trim()
    .optional()
    .transform((v) => (v === '' ? undefined : v))
    .refine((v) => v === undefined || protocols.some((p) => v.startsWith(`${p}://`)), {
      message: `must be a URL starting with ${protocols.map((p) => `${p}://`).join(' or ')}`,
    });
const flag = z
  .enum(['0', '1', 'true', 'false', ''])
  .default('0')
  .transform((v) => v === '1' || v === 'true');
/** A byte size such as `1mb`, `512kb` or `1048576` (1024-based). */
const byteSize = z
  .string()
  .regex(/^\s*\d+(\.\d+)?\s*(b|kb|mb|gb)?\s*$/i, 'must be a byte size such as 1mb, 512kb or 1048576');
const positiveInt = (fallback: number) => integer('must be a positive integer', 1).default(fallback);
const commaList = (message: string, valid: (item: string) => boolean) =>
  z
    .string()
    .default('')
    .transform((v) =>
      v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    )
    .refine((items) => items.every(valid), { message });
/** `1.2.3.4`, `1.2.3.4:53`, `::1` or `[::1]:53` (node:dns Resolver#setServers forms). */
const isDnsServer = (s: string) => {
  const m = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(s) ?? /^([\d.]+)(?::(\d{1,5}))?$/.exec(s);
  if (m) return isIP(m[1]!) !== 0 && (m[2] === undefined || Number(m[2]) <= 65535);
  return isIP(s) === 6;
};
const hostName = z
  .string()
  .trim()
  .toLowerCase()
  .regex(
    /^(?=.{1,253}$)([a-z0-9_]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9_]([a-z0-9-]{0,61}[a-z0-9])?)*$/,
    'must be a host name',
  );

export const EnvSchema = z.object({
  NODE_ENV: z.string().default('development'),
  LOG_LEVEL: z.enum(['error', 'warn', 'info', 'http', 'verbose', 'debug', 'silly']).default('info'),
  PORT: port(3000),
  TRACKING_PORT: port(3001),
  /** Public origin of the tracking service (links, pixel, List-Unsubscribe); default http://127.0.0.1:<TRACKING_PORT>. */
  TRACKING_BASE_URL: optionalUrl(['http', 'https']),
  SMTP_PORT: port(2525),
  /** Health/metrics port of worker processes (send: 3002 when unset; 0 turns it off). */
  OPS_PORT: integer('must be a port number from 0 to 65535', 0, 65535).optional(),
  HOST: z.string().default('0.0.0.0'),
  DATABASE_URL: optionalUrl(['postgres', 'postgresql']),
  AMQP_URL: optionalUrl(['amqp', 'amqps']),
  REDIS_URL: optionalUrl(['redis', 'rediss']),
  DATA_DIR: z.string().default('.data'),
  DB_POOL_SIZE: positiveInt(10),
  REDIS_KEY_PREFIX: z.string().default('mailyard:'),
  SECRET_KEY: z.string().optional(),
  SERVICE_DOMAIN: z.string().default('mailyard.local'),
  ADMIN_API_KEY: z.string().min(16, 'must be at least 16 characters').optional(),
  BOOTSTRAP_API_KEY: z.string().min(16, 'must be at least 16 characters').optional(),
  BOOTSTRAP_TIER: z.enum(['standard', 'enterprise']).default('standard'),
  RATE_LIMIT_STANDARD: positiveInt(100),
  RATE_LIMIT_ENTERPRISE: positiveInt(1000),
  RATE_LIMIT_WINDOW_SECONDS: positiveInt(60),
  API_KEY_CACHE_MS: integer('must be a non-negative integer', 0).default(5000),
  /** Largest JSON body of every route but the send route (read only after authentication). */
  HTTP_BODY_LIMIT: byteSize.default('1mb'),
  /** Largest body of POST /v1/email/send: a 30 MB message is 40 MiB as base64, plus JSON. */
  HTTP_SEND_BODY_LIMIT: byteSize.default('42mb'),
  OUTBOX_POLL_MS: positiveInt(250),
  OUTBOX_BATCH: positiveInt(200),
  SHUTDOWN_TIMEOUT_MS: positiveInt(10000),
  WEBHOOK_ALLOW_INSECURE: flag,
  // Webhooks (gateway registration check, services/webhook-dispatcher)
  WEBHOOK_CONNECT_TIMEOUT_MS: positiveInt(5000),
  WEBHOOK_TIMEOUT_MS: positiveInt(5000),
  /** Seconds between attempts; the last attempt is made when they are used up (default ~24 h). */
  WEBHOOK_RETRY_DELAYS: commaList('must be a comma-separated list of seconds (numbers >= 0)', (s) =>
    /^\d+(\.\d+)?$/.test(s),
  )
    .transform((items) => items.map(Number))
    .default('5,30,120,600,1800,3600,7200,14400,28800,30000'),
  WEBHOOK_BATCH_MAX: positiveInt(100),
  WEBHOOK_BATCH_WAIT_MS: integer('must be a non-negative integer', 0).default(200),
  WEBHOOK_ENDPOINT_CONCURRENCY: positiveInt(4),
  WEBHOOK_CONCURRENCY: positiveInt(256),
  WEBHOOK_POLL_MS: positiveInt(1000),
  /** Lets SMTP/IMAP mailers point at private, loopback or link-local hosts (internal relays). */
  MAILER_ALLOW_PRIVATE_HOSTS: flag,
  /** Lets direct-to-MX delivery reach private, loopback or link-local MX addresses (tests, private networks). */
  MX_ALLOW_PRIVATE_HOSTS: flag,
  // Sending domains: DNS verification, suggested records, background re-checks
  DNS_SERVERS: commaList(
    'must be a comma-separated list of IP addresses, each optionally with :port',
    isDnsServer,
  ),
  DNS_TIMEOUT_MS: positiveInt(2000),
  DNS_TRIES: positiveInt(2),
  DKIM_SELECTOR: hostName.default('mailyard'),
  SPF_INCLUDE: hostName.or(z.literal('none')).optional(),
  SENDING_IPS: commaList(
    'must be a comma-separated list of IP addresses or CIDR ranges',
    (s) => isIP(s.split('/')[0]!) !== 0,
  ),
  INBOUND_MX_HOST: hostName.optional(),
  DOMAIN_CHECK_TICK_MS: positiveInt(60_000),
  DOMAIN_CHECK_FIRST_DELAY_S: positiveInt(300),
  DOMAIN_CHECK_MAX_BACKOFF_S: positiveInt(21_600),
  DOMAIN_CHECK_UNVERIFIED_WINDOW_S: positiveInt(259_200),
  DOMAIN_CHECK_VERIFIED_INTERVAL_S: positiveInt(86_400),
  DOMAIN_CHECK_BATCH: positiveInt(50),
  // Mailer credential checks (POST /v1/smtpbasic/verify, /v1/imapbasic/verify)
  SMTP_VERIFY_TIMEOUT_MS: positiveInt(10_000),
  IMAP_VERIFY_TIMEOUT_MS: positiveInt(10_000),
  // History backfill (POST /v1/imap/{mailerID}/history): the server maximum `count` is clamped to
  BACKFILL_MAX_COUNT: positiveInt(1000),
  // Send service (services/send)
  SEND_MAX_ATTEMPTS: positiveInt(5),
  SEND_RETRY_DELAYS: commaList('must be a comma-separated list of seconds (numbers >= 0)', (s) =>
    /^\d+(\.\d+)?$/.test(s),
  )
    .transform((items) => items.map(Number))
    .default('60,300,1800,7200'),
  SMTP_RELAY_URL: optionalUrl(['smtp', 'smtps']),
  MX_PORT: port(25),
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
  /** Phishing check: active scan time per copy, and links per copy, before it is refused. */
  PHISHING_CHECK_BUDGET_MS: positiveInt(2_000),
  PHISHING_MAX_LINKS: positiveInt(10_000),
});

export type Config = z.infer<typeof EnvSchema>;

/** Parses the environment; an invalid value throws one ConfigError naming the variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const cleaned: Record<string, string> = {};
  for (const [key, value] of Object.entries(env))
    if (value !== undefined && value !== '') cleaned[key] = value;
  const result = EnvSchema.safeParse(cleaned);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const name = String(issue.path[0]);
  const shown = name.includes('KEY') || name.includes('URL') ? '' : ` (got "${env[name]}")`;
  throw new ConfigError(`Invalid configuration: ${name} ${issue.message}${shown}`);
}

/** Overrides for tests and the launcher: merges over process.env. */
export function configFrom(overrides: Record<string, string | undefined>): Config {
  return loadConfig({ ...process.env, ...overrides });
}
