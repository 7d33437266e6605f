import { ErrorText, JSON_INPUT_LIMITS } from '@mailyard/contracts';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import type { Logger } from '../logger/logger';
import { histogram } from '../metrics/registry';
import { type Dependency, type DependencyEndpoint, dependencyOutage } from './dependency-outage';
import { HttpError } from './errors';
import { type ReadinessCheck, opsRouter } from './health';
import { inputGuard } from './input-guard';
import { type JsonBodyLimits, jsonBody, parseByteSize } from './json-body';
import { prefixedRouter } from './prefixed-router';
import { requestContext } from './request-context';

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

const requestDuration = histogram(
  'mailyard_http_request_duration_seconds',
  'HTTP request duration by method, route and status',
  ['method', 'route', 'status'],
  [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
);

// Labelled children cached by key: prom-client hashes label objects on every observe otherwise.
const durationByLabels = new Map<string, { observe(value: number): void }>();

function observeDuration(method: string, route: string, status: number, seconds: number): void {
  const key = `${method} ${route} ${status}`;
  let child = durationByLabels.get(key);
  if (!child) {
    child = requestDuration.labels(method, route, String(status));
    durationByLabels.set(key, child);
  }
  child.observe(seconds);
}

function observe(req: Request, res: Response, next: NextFunction): void {
  const start = process.hrtime.bigint();
  res.once('finish', () => {
    const route = req.route?.path
      ? `${req.baseUrl}${req.route.path}`
      : res.statusCode === 404
        ? 'unmatched'
        : req.baseUrl || 'other';
    observeDuration(req.method, route, res.statusCode, Number(process.hrtime.bigint() - start) / 1e9);
  });
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

/**
 * Maps any error to the spec envelope: a dependency outage (dependency-outage.ts) to a 503 with
 * Retry-After, logged as a warning at most once per dependency every 10 s; unexpected ones are
 * logged with their stack and hidden behind a 500.
 */
export function errorHandler(logger: Logger, dependencies: readonly DependencyEndpoint[] = []) {
  const lastWarn = new Map<Dependency, number>();
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void => {
    let httpError: HttpError;
    const clientError = clientErrorOf(err);
    const outage = err instanceof HttpError ? null : dependencyOutage(err, dependencies);
    if (err instanceof HttpError) httpError = err;
    else if ((err as { type?: string })?.type === 'request.aborted') return;
    else if (clientError) httpError = clientError;
    else if (outage) {
      if (Date.now() - (lastWarn.get(outage) ?? 0) > 10_000) {
        lastWarn.set(outage, Date.now());
        logger.warn('dependency unavailable, answering 503', {
          dependency: outage,
          error: (err as Error).message,
          method: req.method,
          path: req.path,
        });
      }
      httpError = outageError(outage);
    } else {
      logger.error('unhandled request error', { err, method: req.method, path: req.path });
      httpError = new HttpError(500, ErrorText.internal);
    }
    if (res.headersSent) return;
    for (const [name, value] of Object.entries(httpError.headers ?? {})) res.setHeader(name, value);
    res.status(httpError.status).json(httpError.toEnvelope());
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
  app.use(requestContext);
  app.use(observe);
  app.use(prefixedRouter(opsRouter(opts.readiness ?? {})));
  opts.guards?.(app);
  app.use(inputGuard);
  const limits = (
    limit: string | number,
    maxValues: number = JSON_INPUT_LIMITS.maxValues,
  ): JsonBodyLimits => ({
    limit: parseByteSize(limit),
    maxDepth: JSON_INPUT_LIMITS.maxDepth,
    maxValues,
  });
  if (opts.ignoreBodies) app.use(drainBody);
  else
    app.use(
      jsonBody({
        ...limits(opts.bodyLimit ?? '1mb'),
        routes: (opts.largeBodyRoutes ?? []).map((r) => ({
          method: r.method,
          path: r.path,
          ...limits(r.limit, r.maxValues),
        })),
      }),
    );
  opts.routes?.(app);
  app.use((_req, _res, next) => next(new HttpError(404, ErrorText.notFound)));
  app.use(errorHandler(opts.logger, opts.dependencies));
  return app;
}
