/**
 * A fast route's chain, run in one place whichever way the request arrived: `fastRouteRunner`
 * calls the steps express's chain would run for that route, in express's order: requestContext,
 * the duration metric (timeRequest, same `route` label), the route's guards (the instances
 * express mounts for other routes), the URL guard (inputGuard) when the URL holds a `%` or a
 * query (without either it has nothing to refuse), the JSON body reader with the route's limits,
 * the handler, and errors through the same resolver and envelope. The answer is written as
 * express's res.json writes it (writeJson): same status, headers in the same order, same bytes.
 *
 * Two entries reach the runner (createHttpApp wires both):
 * - `exactUrlEntry`, in front of express: a request whose method and raw URL equal the route's
 *   exactly (no query string, no trailing slash, same case) is run without express at all;
 * - `fastRouteEntry`, the first layer of express's chain: the other URL forms express's router
 *   matches to the route (trailing slash, query string, other case) are run by the same runner,
 *   before any app-level middleware, so the chain's middlewares never run for them.
 * Everything else (HEAD, OPTIONS, other methods and paths) goes through express's chain as before.
 *
 * Why: on the busiest route (POST /v1/email/send) about a third of the gateway's own CPU was
 * express itself (router walk, the per-request prototype swap of req/res, its lazy getters);
 * none of it decides anything for an exact URL.
 */
import type { ServerResponse } from 'node:http';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { Router } from 'express';
import { type HttpError, answerError } from './errors';
import type { HttpMiddleware, HttpRequest, HttpResponse } from './http-types';
import type { JsonBodyLimits } from './json-body';
import { readJsonBody } from './json-body';
import { prefixedRouter } from './prefixed-router';
import { requestContext } from './request-context';
import { routeLabel, timeRequest } from './request-metrics';

export interface FastRoute {
  method: string;
  path: string;
  /** The guards express runs before this route (the same instances), in order. */
  guards: readonly HttpMiddleware[];
  /** The route's work; resolves with the JSON body of its 200 answer. */
  handler: (req: HttpRequest, res: HttpResponse) => Promise<unknown>;
}

export interface FastRouteSteps {
  /** The body limits jsonBody applies to `METHOD path`. */
  bodyLimits: (method: string, path: string) => JsonBodyLimits;
  /** The app's error resolver (errorResolver: its outage-warning memory is shared with express's). */
  resolveError: (err: unknown, method: string, path: string) => HttpError | null;
  /** The URL check of express's chain (inputGuard); it reads express's req.path and req.query. */
  urlGuard: (req: Request, res: Response, next: NextFunction) => void;
}

/** Runs a fast route's chain on a request its entry matched. */
export type FastRouteRunner = (req: HttpRequest, res: ServerResponse) => void;

/** Writes `body` as express's `res.status(status).json(body)` does (no ETag: the apps disable it). */
export function writeJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', String(Buffer.byteLength(text)));
  res.end(text, 'utf8');
}

/** Runs an express-style middleware: resolves on `next()`, rejects on `next(err)`, a throw or a rejection. */
function run(mw: HttpMiddleware, req: HttpRequest, res: HttpResponse): Promise<void> {
  return new Promise((resolve, reject) => {
    const ret = mw(req, res, (err) => (err ? reject(err) : resolve()));
    if (ret instanceof Promise) ret.catch((err) => reject(err || new Error('Rejected promise')));
  });
}

const readBody = (req: HttpRequest, limits: JsonBodyLimits) =>
  new Promise<void>((resolve, reject) => readJsonBody(req, limits, (err) => (err ? reject(err) : resolve())));

/** A URL the URL guard could refuse: one with a percent-escape or a query. */
const hasUrlInput = (url: string | undefined) => !!url && (url.includes('%') || url.includes('?'));

/** The one implementation of `route`'s chain (see the top of this file). */
export function fastRouteRunner(route: FastRoute, steps: FastRouteSteps): FastRouteRunner {
  const { method, path } = route;
  const limits = steps.bodyLimits(method, path);
  const urlGuard = steps.urlGuard as unknown as HttpMiddleware;
  return (req, res) => {
    const out = res as HttpResponse;
    // As express's app.handle: its entry has made the bag already, the exact-URL entry has not.
    if (!out.locals) out.locals = Object.create(null);
    let routed = false;
    requestContext(req, out, () => {
      timeRequest(method, out, () => routeLabel(routed ? path : undefined, '', out.statusCode));
      void (async () => {
        for (const guard of route.guards) await run(guard, req, out);
        // Only express's entry passes such URLs (with its req.path and req.query to read).
        if (hasUrlInput(req.url)) await run(urlGuard, req, out);
        await readBody(req, limits);
        routed = true;
        writeJson(out, 200, await route.handler(req, out));
      })().catch((err) =>
        answerError(steps.resolveError(err, method, path), out, (status, body) =>
          writeJson(out, status, body),
        ),
      );
    });
  };
}

export interface RunnableRoute {
  route: FastRoute;
  run: FastRouteRunner;
}

/** The exact-URL entry, in front of express: answers and returns true for a fast route's request, else false. */
export function exactUrlEntry(routes: readonly RunnableRoute[]) {
  const byKey = new Map(routes.map((r) => [`${r.route.method} ${r.route.path}`, r.run]));
  return (req: HttpRequest, res: ServerResponse): boolean => {
    const runner = byKey.get(`${req.method} ${req.url}`);
    if (!runner) return false;
    runner(req, res);
    return true;
  };
}

type MethodRouter = Record<string, (path: string, handler: RequestHandler) => unknown>;

/**
 * express's entry, its first layer: the URL forms express's router matches to a fast route (as
 * it would match the route anywhere in the chain: case-insensitive, optional trailing slash, any
 * query) go to the route's runner; any other request continues down the chain. It is no route of
 * the app's route list (its routers are not reachable from the layer): the app declares each fast
 * route where its routes are (createHttpApp), so express lists it and answers OPTIONS as for any.
 */
export function fastRouteEntry(routes: readonly RunnableRoute[]): RequestHandler {
  const router = Router();
  for (const { route, run } of routes)
    (router as unknown as MethodRouter)[route.method.toLowerCase()]!(route.path, (req, res) => run(req, res));
  const methods = new Set(routes.map((r) => r.route.method));
  const enter = prefixedRouter(router);
  return (req, res, next) => (methods.has(req.method) ? enter(req, res, next) : next());
}

/**
 * The fast routes as declared routes, mounted where the app's routes are: express lists them
 * (OpenAPI coverage, the fuzzer) and answers HEAD and OPTIONS on their paths exactly as on any
 * route's. Their own method never reaches them: fastRouteEntry, first in the chain, matches the
 * same URLs the same way and answers every such request.
 */
export function declaredFastRoutes(routes: readonly RunnableRoute[]): Router {
  const router = Router();
  const answeredInFront: RequestHandler = (req, _res, next) =>
    next(new Error(`${req.method} ${req.originalUrl} reached its declaration: fastRouteEntry answers it`));
  for (const { route } of routes)
    (router as unknown as MethodRouter)[route.method.toLowerCase()]!(route.path, answeredInFront);
  return router;
}
