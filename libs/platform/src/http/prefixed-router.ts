/**
 * Mounting many express routers at the root makes every request walk every router before the
 * one that serves it (each router runs its own dispatch and tries its routes one by one:
 * `POST /v1/email/send` went through five routers and dozens of routes first). `prefixedRouter`
 * lets a request into a router only when its path starts with the static part (everything before
 * the first parameter or wildcard) of one of the router's route paths; others skip it with one
 * string comparison. A route can only match a path that starts with its own static part, compared
 * as express compares it (on the raw, undecoded path; case-insensitively unless the router is
 * case-sensitive), so what is served does not change. A router holding path-less middleware or
 * a path that is not a plain string is always entered.
 */
import type { NextFunction, Request, RequestHandler, Response, Router } from 'express';

interface RouterLayer {
  route?: { path?: unknown };
  rawPath?: unknown;
}

/** The static prefixes of a router's routes, or null when a request cannot be ruled out by path. */
export function routePrefixes(router: Router): string[] | null {
  const stack = (router as unknown as { stack?: RouterLayer[] }).stack;
  const caseSensitive = (router as unknown as { caseSensitive?: boolean }).caseSensitive === true;
  if (!Array.isArray(stack)) return null;
  const prefixes = new Set<string>();
  for (const layer of stack) {
    const path = layer.route ? layer.route.path : layer.rawPath;
    for (const p of Array.isArray(path) ? path : [path]) {
      if (typeof p !== 'string') return null;
      const prefix = p.slice(0, p.search(/[:*?(){}+]|$/));
      if (!layer.route && (prefix === '' || prefix === '/')) return null;
      prefixes.add(caseSensitive ? prefix : prefix.toLowerCase());
    }
  }
  return [...prefixes];
}

/**
 * `router`, entered only by requests whose path starts with one of its routes' static parts. The
 * handler shows the router's `stack` as its own, so whatever lists an app's routes by walking
 * the layers (the OpenAPI coverage test, the hostile-input fuzzer) still finds them.
 */
export function prefixedRouter(router: Router): RequestHandler {
  let prefixes: string[] | null | undefined;
  let caseSensitive = false;
  const handler = (req: Request, res: Response, next: NextFunction) => {
    if (prefixes === undefined) {
      // Worked out on the first request: every route is registered by then.
      prefixes = routePrefixes(router);
      caseSensitive = (router as unknown as { caseSensitive?: boolean }).caseSensitive === true;
    }
    if (prefixes === null) return router(req, res, next);
    const path = caseSensitive ? req.path : req.path.toLowerCase();
    for (const prefix of prefixes) if (path.startsWith(prefix)) return router(req, res, next);
    next();
  };
  return Object.defineProperty(handler, 'stack', { get: () => router.stack });
}
