import { ErrorText } from '@mailyard/contracts';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import type { Logger } from '../logger/logger';
import { histogram } from '../metrics/registry';
import { HttpError } from './errors';
import { type ReadinessCheck, opsRouter } from './health';
import { requestContext } from './request-context';

export interface HttpAppOptions {
  logger: Logger;
  bodyLimit?: string;
  readiness?: Record<string, ReadinessCheck>;
  /** Adds the service's routes, after body parsing and before the 404 / error handlers. */
  routes?: (app: Express) => void;
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

/** Maps any error to the spec envelope; unexpected ones are logged and hidden behind a 500. */
export function errorHandler(logger: Logger) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void => {
    let httpError: HttpError;
    const type = (err as { type?: string })?.type;
    if (err instanceof HttpError) httpError = err;
    else if (type === 'entity.parse.failed') httpError = new HttpError(400, ErrorText.malformedJson);
    else if (type === 'entity.too.large') httpError = new HttpError(413, ErrorText.payloadTooLarge);
    else if (type === 'encoding.unsupported' || type === 'charset.unsupported')
      httpError = new HttpError(415, ErrorText.unsupportedMediaType);
    else if (type === 'request.aborted') return;
    else {
      logger.error('unhandled request error', { err, method: req.method, path: req.path });
      httpError = new HttpError(500, ErrorText.internal);
    }
    if (res.headersSent) return;
    for (const [name, value] of Object.entries(httpError.headers ?? {})) res.setHeader(name, value);
    res.status(httpError.status).json(httpError.toEnvelope());
  };
}

export function createHttpApp(opts: HttpAppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  app.use(requestContext);
  app.use(observe);
  app.use(opsRouter(opts.readiness ?? {}));
  app.use(express.json({ limit: opts.bodyLimit ?? '1mb', strict: false }));
  opts.routes?.(app);
  app.use((_req, _res, next) => next(new HttpError(404, ErrorText.notFound)));
  app.use(errorHandler(opts.logger));
  return app;
}
