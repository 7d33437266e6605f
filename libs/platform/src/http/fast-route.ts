/**
 * Routes answered without express: for a request whose method and raw URL equal a fast route's
 * exactly (no query string, no trailing slash, same case), the steps express's chain runs for
 * that route are called directly, the same functions in the same order: requestContext, the
 * duration metric (timeRequest, same `route` label), the route's guards (the instances express
 * mounts), the JSON body reader with the route's limits, the handler, and errors through the
 * same resolver and envelope. Everything else (HEAD, OPTIONS, `?query`, `/V1/...`, `/path/`)
 * goes to express unchanged. The URL guard (inputGuard) has nothing to refuse on such a URL: it
 * holds no `%` and no query.
 *
 * Why: on the busiest route (POST /v1/email/send) about a third of the gateway's own CPU was
 * express itself (router walk, the per-request prototype swap of req/res, its lazy getters);
 * none of it decides anything for an exact URL. The answer is written as express's res.json
 * writes it (writeJson): same status, headers in the same order, same bytes.
 * services/gateway/test/send-url-forms.test.ts compares both paths request by request.
 */
import type { ServerResponse } from 'node:http';
import { type HttpError, answerError } from './errors';
import type { HttpMiddleware, HttpRequest, HttpResponse } from './http-types';
import type { JsonBodyLimits } from './json-body';
import { readJsonBody } from './json-body';
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
}

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

/** A listener step: answers and returns true for a fast route's request, else returns false. */
export function fastRoutes(routes: readonly FastRoute[], steps: FastRouteSteps) {
  const byKey = new Map(routes.map((r) => [`${r.method} ${r.path}`, r]));
  return (req: HttpRequest, res: ServerResponse): boolean => {
    const route = byKey.get(`${req.method} ${req.url}`);
    if (!route) return false;
    const out = res as HttpResponse;
    out.locals = Object.create(null);
    const method = route.method;
    const path = route.path;
    let routed = false;
    requestContext(req, out, () => {
      timeRequest(method, out, () => routeLabel(routed ? path : undefined, '', out.statusCode));
      void (async () => {
        for (const guard of route.guards) await run(guard, req, out);
        await readBody(req, steps.bodyLimits(method, path));
        routed = true;
        writeJson(out, 200, await route.handler(req, out));
      })().catch((err) =>
        answerError(steps.resolveError(err, method, path), out, (status, body) =>
          writeJson(out, status, body),
        ),
      );
    });
    return true;
  };
}
