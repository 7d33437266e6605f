/**
 * The gateway's HTTP app: platform createHttpApp (request id and traceparent, duration metric,
 * /healthz and /readyz (/metrics is on the ops port only), guards, URL and JSON body checks,
 * routes, 404, error envelope) with the gateway's guards (admin key on /admin/v1; API key then
 * rate limit on /v1) and its routers.
 * POST /v1/email/send, the busiest request, is a fast route (platform fast-route.ts): its whole
 * chain (the same guard instances, URL check, body limits, handler send/routes.ts sendHandler and
 * error envelope) is one runner, reached in front of express for the exact URL and from the first
 * layer of express's chain for its other forms (trailing slash, query string, other case).
 */
import { JSON_INPUT_LIMITS } from '@mailyard/contracts';
import {
  type ReadinessCheck,
  type ServiceContext,
  createHttpApp,
  dependencyEndpoints,
  parseByteSize,
  prefixedRouter,
  rateLimitOptions,
} from '@mailyard/platform';
import type { Express, NextFunction, Request, Response } from 'express';
import { adminAuth } from './admin/admin-auth';
import { adminRoutes } from './admin/routes';
import { auditStep } from './audit/audit-step';
import { auditRoutes } from './audit/routes';
import { apiKeyAuth } from './auth/api-key-auth';
import { KeyCache } from './auth/key-cache';
import type { KeyUsage } from './auth/key-usage';
import { backfillRoutes } from './backfill/routes';
import { dashboardRoutes } from './dashboard/routes';
import { domainReportRoutes } from './domains/report-routes';
import { reputationRoutes } from './domains/reputation-routes';
import { domainRoutes } from './domains/routes';
import { EventHub } from './events-stream/event-hub';
import { eventStreamRoutes } from './events-stream/routes';
import { inboundRoutes } from './inbound/routes';
import { keyRoutes } from './keys/routes';
import { logRoutes } from './logs/routes';
import { mailerRoutes } from './mailers/routes';
import { PUBLIC_V1_ROUTES, oauthRoutes } from './oauth/routes';
import { openApiRoutes } from './openapi/routes';
import { rateLimit } from './rate-limit/rate-limit';
import { cancelSendRoutes } from './send/cancel-route';
import { SEND_PATH, sendHandler } from './send/routes';
import { gatewayContext } from './settings';
import { statsRoutes } from './stats/routes';
import { suppressionRoutes } from './suppressions/routes';
import { templateRoutes } from './templates/routes';
import { webhookRoutes } from './webhooks/routes';

type Middleware = (req: Request, res: Response, next: NextFunction) => unknown;

/** `mw`, except on the few /v1 routes served without a key (the OAuth callback). */
const exceptPublic =
  (mw: Middleware): Middleware =>
  (req, res, next) =>
    PUBLIC_V1_ROUTES.some((r) => r.method === req.method && r.path === `${req.baseUrl}${req.path}`)
      ? next()
      : mw(req, res, next);

export interface GatewayHooks {
  /** A send committed outbox rows: lets the relay publish without waiting for its next poll. */
  onOutboxWrite?: () => void;
  /** Records which keys authenticated requests, for last_used_at (index.ts flushes it); none: not kept. */
  keyUsage?: KeyUsage;
  /** The process's event-stream fan-out (index.ts closes it on stop); made here when absent. */
  eventHub?: EventHub;
}

/** The event-stream fan-out with the gateway's EVENTS_STREAM_* settings. */
export function createEventHub(serviceCtx: ServiceContext): EventHub {
  const { config, bus, logger } = gatewayContext(serviceCtx);
  return new EventHub(bus, logger, {
    maxPerTenant: config.EVENTS_STREAM_MAX_PER_TENANT,
    maxClients: config.EVENTS_STREAM_MAX_CLIENTS,
    clientBufferBytes: parseByteSize(config.EVENTS_STREAM_CLIENT_BUFFER),
    heartbeatMs: config.EVENTS_STREAM_HEARTBEAT_SECONDS * 1000,
    replay: config.EVENTS_STREAM_REPLAY,
  });
}

/** The public /v1 API and the admin API, as an express app (supertest drives it directly). */
export function buildGatewayApp(
  serviceCtx: ServiceContext,
  readiness: Record<string, ReadinessCheck> = {},
  hooks: GatewayHooks = {},
): Express {
  const ctx = gatewayContext(serviceCtx);
  const { config, db, kv, logger } = ctx;
  const keyCache = new KeyCache(config.API_KEY_CACHE_MS);
  // One instance of each guard: express's chain (every other /v1 route) and the send route's
  // runner share the key cache and the rate limiter's batching and warnings.
  const v1Auth = apiKeyAuth(db, keyCache, hooks.keyUsage);
  const v1RateLimit = rateLimit(kv, logger, rateLimitOptions(config));
  const send = sendHandler({
    db,
    sealer: ctx.sealer,
    onOutboxWrite: hooks.onOutboxWrite,
  });
  return createHttpApp({
    logger,
    bodyLimit: config.HTTP_BODY_LIMIT,
    largeBodyRoutes: [
      {
        method: 'POST',
        path: SEND_PATH,
        limit: config.HTTP_SEND_BODY_LIMIT,
        maxValues: JSON_INPUT_LIMITS.maxSendValues,
      },
    ],
    readiness,
    // A socket error to one of these answers 503 + Retry-After, not 500 (docs/deploy.md).
    dependencies: dependencyEndpoints({
      database: config.DATABASE_URL,
      kv: config.REDIS_URL,
      bus: config.AMQP_URL,
    }),
    // Keys are checked before any body is read (docs/api/conventions.md "Requests").
    guards: (app) => {
      // req.ip: the client address the audit log records (TRUST_PROXY, docs/configuration.md).
      app.set('trust proxy', config.TRUST_PROXY);
      app.use('/admin/v1', adminAuth(config.ADMIN_API_KEY));
      app.use('/v1', exceptPublic(v1Auth), exceptPublic(v1RateLimit));
    },
    // POST /v1/email/send, run by platform fast-route.ts: the /v1 guards, the body limits of
    // largeBodyRoutes, the handler. createHttpApp declares it among the routes (listed, OPTIONS).
    fastRoutes: [{ method: 'POST', path: SEND_PATH, guards: [v1Auth, v1RateLimit], handler: send }],
    // Each router is entered only by paths its routes can match (prefixedRouter).
    routes: (app) => {
      // Records every change a /v1 route answers with 2xx (audit/audit-table.ts), before the answer.
      app.use('/v1', auditStep(db, logger));
      app.use(prefixedRouter(openApiRoutes()));
      app.use(prefixedRouter(dashboardRoutes()));
      app.use(prefixedRouter(adminRoutes(db, keyCache)));
      app.use(prefixedRouter(templateRoutes(db)));
      app.use(prefixedRouter(domainRoutes(ctx, { onOutboxWrite: hooks.onOutboxWrite })));
      app.use(prefixedRouter(domainReportRoutes(db)));
      app.use(prefixedRouter(reputationRoutes(ctx)));
      app.use(prefixedRouter(mailerRoutes(ctx)));
      app.use(prefixedRouter(oauthRoutes(ctx)));
      app.use(prefixedRouter(logRoutes(db)));
      app.use(prefixedRouter(eventStreamRoutes(hooks.eventHub ?? createEventHub(ctx))));
      app.use(prefixedRouter(cancelSendRoutes(db)));
      app.use(prefixedRouter(statsRoutes(db)));
      app.use(prefixedRouter(suppressionRoutes(db)));
      app.use(prefixedRouter(webhookRoutes(ctx)));
      app.use(prefixedRouter(inboundRoutes(ctx)));
      app.use(prefixedRouter(keyRoutes(db, keyCache)));
      app.use(prefixedRouter(auditRoutes(db)));
      // Last: the legacy alias /v1/{mailerID}/backfill must not shadow other /v1 routes.
      app.use(prefixedRouter(backfillRoutes(ctx)));
    },
  });
}
