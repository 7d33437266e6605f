import { REPUTATION_DEFAULTS, type ReputationSettings } from '@mailyard/contracts';
/**
 * The platform's core settings: what every process needs (ports and public URLs, logging, store
 * URLs, secrets, DNS, the shared outbound-target opt-outs). Each service parses its own variables
 * with its own schema over `config.env` (services/<name>/src/settings.ts, parseSettings below);
 * the platform knows nothing of SEND_*, PHISHING_*, DOMAIN_CHECK_*, SMTP_VERIFY_*, WEBHOOK_* of
 * the dispatcher and such. Any invalid value, core or service, is one ConfigError line.
 */
import { z } from 'zod';
import {
  commaList,
  flag,
  fraction,
  integer,
  isDnsServer,
  optionalUrl,
  port,
  positiveInt,
  secretValue,
} from './fields';

/** Thrown for an invalid environment; its message is the one line printed before exiting. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

export const EnvSchema = z.object({
  NODE_ENV: z.string().default('development'),
  LOG_LEVEL: z.enum(['error', 'warn', 'info', 'http', 'verbose', 'debug', 'silly']).default('info'),
  PORT: port(3000),
  TRACKING_PORT: port(3001),
  /** Public origin of the tracking service (links, pixel, List-Unsubscribe); default http://127.0.0.1:<TRACKING_PORT>. */
  TRACKING_BASE_URL: optionalUrl(['http', 'https']),
  SMTP_PORT: port(2525),
  /**
   * The ops port: /healthz, /readyz and /metrics, the only port serving /metrics. Unset: the
   * process's own (gateway 3006, tracking 3007, send 3002, webhook-dispatcher 3003, imap-backfill
   * 3004, inbound-smtp 3005, all-in-one 3008); 0 binds any free port (named in the banner).
   */
  OPS_PORT: integer('must be a port number from 0 to 65535', 0, 65535).optional(),
  HOST: z.string().default('0.0.0.0'),
  DATABASE_URL: optionalUrl(['postgres', 'postgresql']),
  AMQP_URL: optionalUrl(['amqp', 'amqps']),
  REDIS_URL: optionalUrl(['redis', 'rediss']),
  DATA_DIR: z.string().default('.data'),
  DB_POOL_SIZE: positiveInt(10),
  REDIS_KEY_PREFIX: z.string().default('mailyard:'),
  /** 32 bytes, checked by the sealer (secret-key.ts); an example's placeholder is refused here. */
  SECRET_KEY: secretValue(),
  SERVICE_DOMAIN: z.string().default('mailyard.local'),
  /** Domain of VERP return paths and the List-Unsubscribe mailto (its MX is the inbound service); default SERVICE_DOMAIN. */
  BOUNCE_DOMAIN: z
    .string()
    .regex(/^(?=.{1,253}$)[a-z0-9-]+(\.[a-z0-9-]+)+$/i, 'must be a domain name')
    .optional(),
  OUTBOX_POLL_MS: positiveInt(250),
  OUTBOX_BATCH: positiveInt(200),
  /**
   * 0 (default): each outbox row is deleted by the transaction that publishes it. More: published
   * rows are kept that long, marked sent (an UPDATE per message), for debugging.
   */
  OUTBOX_RETENTION_MS: integer('must be a whole number of milliseconds, 0 or more', 0, 2_147_483_647).default(
    0,
  ),
  SHUTDOWN_TIMEOUT_MS: positiveInt(10000),
  /** http:// and private webhook targets (gateway registration, incoming webhooks, dispatcher). */
  WEBHOOK_ALLOW_INSECURE: flag,
  /** Lets SMTP/IMAP mailers point at private, loopback or link-local hosts (gateway checks, send). */
  MAILER_ALLOW_PRIVATE_HOSTS: flag,
  // The project's DNS resolver (domain checks, MX lookups, guarded connects)
  DNS_SERVERS: commaList(
    'must be a comma-separated list of IP addresses, each optionally with :port',
    isDnsServer,
  ),
  DNS_TIMEOUT_MS: positiveInt(2000),
  DNS_TRIES: positiveInt(2),
  // Reputation and automatic pause (docs/deliverability.md): read by every process that records
  // bounces and complaints (send, tracking, inbound-smtp) and by the gateway's reputation routes.
  REPUTATION_WINDOW: positiveInt(REPUTATION_DEFAULTS.window).refine((n) => n <= 100_000, {
    message: 'must be at most 100000',
  }),
  PAUSE_BOUNCE_RATE: fraction(REPUTATION_DEFAULTS.bounceRate),
  PAUSE_COMPLAINT_RATE: fraction(REPUTATION_DEFAULTS.complaintRate),
  PAUSE_MIN_VOLUME: positiveInt(REPUTATION_DEFAULTS.minVolume),
});

export type CoreConfig = z.infer<typeof EnvSchema>;
/** The core settings and the environment they came from (services parse their own part of it). */
export type Config = CoreConfig & { readonly env: Readonly<Record<string, string>> };

/** Drops unset and empty variables: an empty value means "use the default". */
function cleanEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const cleaned: Record<string, string> = {};
  for (const [key, value] of Object.entries(env))
    if (value !== undefined && value !== '') cleaned[key] = value;
  return cleaned;
}

/**
 * Parses `env` with `schema`; an invalid value throws one ConfigError naming the variable (its
 * value is shown when set, unless the name suggests a secret or a URL with credentials).
 */
export function parseSettings<S extends z.ZodTypeAny>(
  schema: S,
  env: Readonly<Record<string, string | undefined>>,
): z.infer<S> {
  const cleaned = cleanEnv(env);
  const result = schema.safeParse(cleaned);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const name = String(issue.path[0]);
  const secret = name.includes('KEY') || name.includes('URL');
  const shown = secret || cleaned[name] === undefined ? '' : ` (got "${cleaned[name]}")`;
  throw new ConfigError(`Invalid configuration: ${name} ${issue.message}${shown}`);
}

/** Parses the environment; an invalid value throws one ConfigError naming the variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const cleaned = cleanEnv(env);
  return { ...parseSettings(EnvSchema, cleaned), env: Object.freeze(cleaned) };
}

/** The domain of the service's own addresses: BOUNCE_DOMAIN, else SERVICE_DOMAIN (lowercase). */
export function bounceDomain(config: Pick<CoreConfig, 'BOUNCE_DOMAIN' | 'SERVICE_DOMAIN'>): string {
  return (config.BOUNCE_DOMAIN ?? config.SERVICE_DOMAIN).toLowerCase();
}

/** The pause thresholds of the core settings (REPUTATION_WINDOW, PAUSE_*). */
export function reputationSettingsOf(
  config: Pick<
    CoreConfig,
    'REPUTATION_WINDOW' | 'PAUSE_BOUNCE_RATE' | 'PAUSE_COMPLAINT_RATE' | 'PAUSE_MIN_VOLUME'
  >,
): ReputationSettings {
  return {
    window: config.REPUTATION_WINDOW,
    bounceRate: config.PAUSE_BOUNCE_RATE,
    complaintRate: config.PAUSE_COMPLAINT_RATE,
    minVolume: config.PAUSE_MIN_VOLUME,
  };
}

/** Overrides for tests and the launcher: merges over process.env. */
export function configFrom(overrides: Record<string, string | undefined>): Config {
  return loadConfig({ ...process.env, ...overrides });
}
