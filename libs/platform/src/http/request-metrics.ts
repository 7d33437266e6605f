/**
 * The HTTP duration histogram, labelled by method, route and status. `timeRequest` is the one
 * place a request is timed: express's chain (createHttpApp's observe) and the fast routes
 * (fast-route.ts) both call it, with the `route` label `routeLabel` gives.
 */
import type { ServerResponse } from 'node:http';
import { histogram } from '../metrics/registry';

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

/** The `route` label of a request: its route's path, else `unmatched` (404) or its mount path. */
export function routeLabel(routePath: string | undefined, baseUrl: string, status: number): string {
  return routePath ? `${baseUrl}${routePath}` : status === 404 ? 'unmatched' : baseUrl || 'other';
}

/** Observes the request's duration when its response finishes, labelled with `route()` then. */
export function timeRequest(method: string, res: ServerResponse, route: () => string): void {
  const start = process.hrtime.bigint();
  res.once('finish', () => {
    observeDuration(method, route(), res.statusCode, Number(process.hrtime.bigint() - start) / 1e9);
  });
}
