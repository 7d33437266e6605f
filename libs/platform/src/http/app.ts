import type { IncomingMessage, ServerResponse } from 'node:http';
import { ErrorText, JSON_INPUT_LIMITS } from '@mailyard/contracts';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import type { Logger } from '../logger/logger';
import { type Dependency, type DependencyEndpoint, dependencyOutage } from './dependency-outage';
import { HttpError, answerError } from './errors';
import {
  type FastRoute,
  declaredFastRoutes,
  exactUrlEntry,
  fastRouteEntry,
  fastRouteRunner,
} from './fast-route';
import { type ReadinessCheck, opsRouter, probesRouter } from './health';
import { inputGuard } from './input-guard';
import { type JsonBodyLimits, bodyLimitsOf, jsonBody, parseByteSize } from './json-body';
import { prefixedRouter } from './prefixed-router';
import { requestContext } from './request-context';
import { routeLabel, timeRequest } from './request-metrics';

/** A route with a larger JSON body than the default (the send route). */
export interface LargeBodyRoute {
  method: string;
  path: string;
  limit: string | number;
  maxValues?: number;
}

export interface HttpAppOptions {
  logger: Logger;
  /** Largest JSON body of every route (after decompression); default 1mb. */
  bodyLimit?: string | number;
  /** Routes allowed a larger body; they are still read only after `guards` let them through. */
  largeBodyRoutes?: LargeBodyRoute[];
  /**
   * The service reads no request bodies (tracking: an RFC 8058 one-click POST is form-encoded and
   * carries nothing the token does not): bodies of any type are drained unread, never buffered.
   */
  ignoreBodies?: boolean;
  readiness?: Record<string, ReadinessCheck>;
  /**
   * Serve `/metrics` beside `/healthz` and `/readyz`: the ops port's app only (runtime/run.ts,
   * createOpsApp). A service's public app never does (its /metrics is the 404 of any unknown path).
   */
  metrics?: boolean;
  /**
   * Where the service's database, kv and bus are (dependencyEndpoints(config URLs)): a socket
   * error to one of them is answered as an outage (503), see dependency-outage.ts.
   */
  dependencies?: readonly DependencyEndpoint[];
  /**
   * Authentication and rate limits: run before the URL is validated and before any body is
   * read, so an unauthenticated request costs no parsing whatever it carries.
   */
  guards?: (app: Express) => void;
  /** Adds the service's routes, after body parsing and before the 404 / error handlers. */
  routes?: (app: Express) => void;
  /**
   * Routes whose chain is fast-route.ts's runner (the steps of the chain above, called directly):
   * an exact METHOD + URL is run in front of express, the other URL forms express matches to the
   * route by the first layer of its chain. `guards` must hold the same guard instances for their
   * paths (HEAD and OPTIONS on them still go through the chain); `routes` must not serve them.
   */
  fastRoutes?: readonly FastRoute[];
}

/** Maps the 4xx errors express and its router raise themselves (they carry `status`). */
function clientErrorOf(err: unknown): HttpError | null {
  const status =
    (err as { status?: unknown; statusCode?: unknown })?.status ??
    (err as { statusCode?: unknown })?.statusCode;
  if (typeof status !== 'number' || status < 400 || status > 499) return null;
  if (status === 404) return new HttpError(404, ErrorText.notFound);
  if (status === 413) return new HttpError(413, ErrorText.payloadTooLarge);
  if (status === 415) return new HttpError(415, ErrorText.unsupportedMediaType);
  return new HttpError(status, ErrorText.invalidRequest);
}

function observe(req: Request, res: Response, next: NextFunction): void {
  timeRequest(req.method, res, () => routeLabel(req.route?.path, req.baseUrl, res.statusCode));
  next();
}

/** Seconds a client is asked to wait after a dependency outage (Retry-After of the 503). */
export const OUTAGE_RETRY_AFTER_SECONDS = 5;

const OUTAGE_DETAILS: Record<Dependency, string> = {
  database: ErrorText.databaseUnavailable,
  kv: ErrorText.kvUnavailable,
  bus: ErrorText.busUnavailable,
};

/** The 503 a dependency outage is answered with: the spec's envelope, Retry-After. */
export function outageError(dependency: Dependency): HttpError {
  return new HttpError(503, ErrorText.unavailable, {
    details: OUTAGE_DETAILS[dependency],
    headers: { 'Retry-After': String(OUTAGE_RETRY_AFTER_SECONDS) },
  });
}

/** express's error handler: the envelope `resolve` (errorResolver) chooses, through res.json. */
export function errorHandler(resolve: (err: unknown, method: string, path: string) => HttpError | null) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void =>
    answerError(resolve(err, req.method, req.path), res, (status, body) => res.status(status).json(body));
}

/**
 * Maps any error to the spec envelope: a dependency outage (dependency-outage.ts) to a 503 with
 * Retry-After, logged as a warning at most once per dependency every 10 s; unexpected ones are
 * logged with their stack and hidden behind a 500. Null: the client went away (no answer).
 */
export function errorResolver(logger: Logger, dependencies: readonly DependencyEndpoint[] = []) {
  const lastWarn = new Map<Dependency, number>();
  return (err: unknown, method: string, path: string): HttpError | null => {
    const clientError = clientErrorOf(err);
    const outage = err instanceof HttpError ? null : dependencyOutage(err, dependencies);
    if (err instanceof HttpError) return err;
    if ((err as { type?: string })?.type === 'request.aborted') return null;
    if (clientError) return clientError;
    if (outage) {
      if (Date.now() - (lastWarn.get(outage) ?? 0) > 10_000) {
        lastWarn.set(outage, Date.now());
        logger.warn('dependency unavailable, answering 503', {
          dependency: outage,
          error: (err as Error).message,
          method,
          path,
        });
      }
      return outageError(outage);
    }
    logger.error('unhandled request error', { err, method, path });
    return new HttpError(500, ErrorText.internal);
  };
}

function drainBody(req: Request, _res: Response, next: NextFunction): void {
  req.resume();
  next();
}

export function createHttpApp(opts: HttpAppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  const limits = (
    limit: string | number,
    maxValues: number = JSON_INPUT_LIMITS.maxValues,
  ): JsonBodyLimits => ({
    limit: parseByteSize(limit),
    maxDepth: JSON_INPUT_LIMITS.maxDepth,
    maxValues,
  });
  const bodyOptions = {
    ...limits(opts.bodyLimit ?? '1mb'),
    routes: (opts.largeBodyRoutes ?? []).map((r) => ({
      method: r.method,
      path: r.path,
      ...limits(r.limit, r.maxValues),
    })),
  };
  const resolveError = errorResolver(opts.logger, opts.dependencies);
  const steps = { bodyLimits: bodyLimitsOf(bodyOptions), resolveError, urlGuard: inputGuard };
  const fast = (opts.ignoreBodies ? [] : (opts.fastRoutes ?? [])).map((route) => ({
    route,
    run: fastRouteRunner(route, steps),
  }));
  if (fast.length) app.use(fastRouteEntry(fast));
  app.use(requestContext);
  app.use(observe);
  const checks = opts.readiness ?? {};
  app.use(prefixedRouter(opts.metrics ? opsRouter(checks) : probesRouter(checks)));
  opts.guards?.(app);
  app.use(inputGuard);
  if (opts.ignoreBodies) app.use(drainBody);
  else app.use(jsonBody(bodyOptions));
  if (fast.length) app.use(prefixedRouter(declaredFastRoutes(fast)));
  opts.routes?.(app);
  app.use((_req, _res, next) => next(new HttpError(404, ErrorText.notFound)));
  app.use(errorHandler(resolveError));
  if (fast.length) {
    const exact = exactUrlEntry(fast);
    // In front of express's own handle (which swaps req/res prototypes and walks the router).
    const app_ = app as unknown as {
      handle: (req: IncomingMessage, res: ServerResponse, next?: unknown) => void;
    };
    const expressHandle = app_.handle.bind(app);
    app_.handle = (req, res, next) => {
      if (!exact(req, res)) expressHandle(req, res, next);
    };
  }
  return app;
}

/** The ops port's app: `/healthz`, `/readyz` and `/metrics`; bodies are never read. */
export function createOpsApp(opts: Pick<HttpAppOptions, 'logger' | 'readiness' | 'routes'>): Express {
  return createHttpApp({ ...opts, metrics: true, ignoreBodies: true });
}
