import { isIP } from 'node:net';
/**
 * The gateway's own variables (docs/configuration.md "Gateway"), parsed with its own zod schema over
 * `config.env`; the core ones (ports, store URLs, secrets, DNS, the shared outbound opt-outs)
 * come from the platform's Config. A bad value is one ConfigError line at start-up (main.ts
 * passes gatewaySettings to runProcess). Names and defaults are the documented ones.
 */
import {
  type Config,
  type ServiceContext,
  byteSize,
  commaList,
  hostName,
  integer,
  parseSettings,
  positiveInt,
  secretValue,
  trustProxy,
} from '@mailyard/platform';
import { ProviderEnvObject, providerEnvCheck } from '@mailyard/providers';
import { z } from 'zod';
import { RetentionEnvObject } from './retention/settings';

/** ADMIN_API_KEY, BOOTSTRAP_API_KEY: long enough, and not a placeholder of the examples. */
const apiKey = secretValue(z.string().min(16, 'must be at least 16 characters'));

export const GatewayEnvSchema = z
  .object({
    ADMIN_API_KEY: apiKey,
    BOOTSTRAP_API_KEY: apiKey,
    BOOTSTRAP_TIER: z.enum(['standard', 'enterprise']).default('standard'),
    RATE_LIMIT_STANDARD: positiveInt(100),
    RATE_LIMIT_ENTERPRISE: positiveInt(1000),
    RATE_LIMIT_WINDOW_SECONDS: positiveInt(60),
    API_KEY_CACHE_MS: integer('must be a non-negative integer', 0).default(5000),
    /** Whose X-Forwarded-For gives the client address the audit log records (express `trust proxy`). */
    TRUST_PROXY: trustProxy,
    /** How often the keys used since the last time get their last_used_at written (one UPDATE). */
    API_KEY_LAST_USED_FLUSH_MS: positiveInt(60_000),
    /** Largest JSON body of every route but the send route (read only after authentication). */
    HTTP_BODY_LIMIT: byteSize.default('1mb'),
    /** Largest body of POST /v1/email/send: a 30 MB message is 40 MiB as base64, plus JSON. */
    HTTP_SEND_BODY_LIMIT: byteSize.default('42mb'),
    /** Webhook registration check: connect timeout of the test request. */
    WEBHOOK_CONNECT_TIMEOUT_MS: positiveInt(5000),
    /**
     * Replays of one delivery (counted with its replays: they share one body) per window; past it
     * POST /v1/webhook/deliveries/{id}/replay answers 429 (docs/webhooks.md).
     */
    WEBHOOK_REPLAY_LIMIT: positiveInt(5),
    WEBHOOK_REPLAY_WINDOW_SECONDS: positiveInt(60),
    // Sending domains: suggested records, background re-checks
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
    // Mailer credential checks (POST /v1/smtpbasic/verify, /v1/imapbasic/verify, enable, updates)
    SMTP_VERIFY_TIMEOUT_MS: positiveInt(10_000),
    IMAP_VERIFY_TIMEOUT_MS: positiveInt(10_000),
    // History backfill (POST /v1/imap/{mailerID}/history): the server maximum `count` is clamped to
    BACKFILL_MAX_COUNT: positiveInt(1000),
    // Live event stream (GET /v1/events/stream, docs/operations.md "Live events")
    EVENTS_STREAM_MAX_PER_TENANT: positiveInt(20),
    EVENTS_STREAM_MAX_CLIENTS: positiveInt(1000),
    EVENTS_STREAM_CLIENT_BUFFER: byteSize.default('1mb'),
    EVENTS_STREAM_HEARTBEAT_SECONDS: positiveInt(15),
    EVENTS_STREAM_REPLAY: integer('must be an integer from 0 to 100000', 0, 100_000).default(1000),
  })
  // OAuth mailers: provider endpoints, the deployment's apps, token lifecycle (libs/providers).
  .merge(ProviderEnvObject)
  // Retention durations and the sweep interval (retention/settings.ts).
  .merge(RetentionEnvObject)
  .superRefine(providerEnvCheck);

export type GatewaySettings = z.infer<typeof GatewayEnvSchema>;
/** The core Config with the gateway's own settings beside it. */
export type GatewayConfig = Config & GatewaySettings;
export type GatewayContext = ServiceContext & { config: GatewayConfig };

/** Parses the gateway's variables from `config.env`; a bad value throws one ConfigError line. */
export function gatewaySettings(config: Config): GatewaySettings {
  return parseSettings(GatewayEnvSchema, config.env);
}

const parsed = new WeakMap<Config, GatewayConfig>();

/** `config` with the gateway's settings (parsed once per Config). */
export function gatewayConfig(config: Config): GatewayConfig {
  if ('DOMAIN_CHECK_TICK_MS' in config) return config as GatewayConfig;
  let full = parsed.get(config);
  if (!full) {
    full = { ...config, ...gatewaySettings(config) };
    parsed.set(config, full);
  }
  return full;
}

/** The service context with the gateway's settings in `config`. */
export function gatewayContext<C extends Pick<ServiceContext, 'config'>>(
  ctx: C,
): C & { config: GatewayConfig } {
  return { ...ctx, config: gatewayConfig(ctx.config) };
}
