/**
 * The routes an express app serves, read from its router stack (nested routers included, and the
 * routers wrapped by prefixedRouter, which show their stack), so tests that must cover every route
 * (OpenAPI coverage, the API docs coverage, the fuzzer, the tenant isolation table) find a route
 * added later by themselves. `all` marks a `router.all` helper (e.g. the 400 for a missing path
 * parameter): not an endpoint of its own. Typed structurally (the kit does not depend on express).
 */
export interface AppRoute {
  method: string;
  path: string;
  all: boolean;
}

interface Layer {
  route?: { path: string | string[]; methods: Record<string, boolean> };
  handle?: { stack?: Layer[] };
}

/** Every route of an express `app`; a `router.all` helper is listed once with method `ALL`. */
export function appRoutes(app: object): AppRoute[] {
  const out: AppRoute[] = [];
  const walk = (stack: Layer[]) => {
    for (const layer of stack) {
      if (layer.route) {
        const paths = Array.isArray(layer.route.path) ? layer.route.path : [layer.route.path];
        for (const m of Object.keys(layer.route.methods))
          for (const path of paths)
            out.push({ method: m === '_all' ? 'ALL' : m.toUpperCase(), path, all: m === '_all' });
      } else if (layer.handle?.stack) walk(layer.handle.stack);
    }
  };
  walk((app as { router: { stack: Layer[] } }).router.stack);
  return out;
}

/** The endpoints of an express `app` as `METHOD /path` (router.all helpers left out). */
export function endpointKeys(app: object): string[] {
  return appRoutes(app)
    .filter((r) => !r.all)
    .map((r) => `${r.method} ${r.path}`);
}
