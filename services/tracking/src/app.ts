import { type ReadinessCheck, createHttpApp } from '@mailyard/platform';
import type { Express } from 'express';
import { clickRoute } from './routes/click';
import type { RouteDeps } from './routes/deps';
import { openRoute } from './routes/open';
import { unsubscribeRoute } from './routes/unsubscribe';
import type { TrustProxy } from './settings';

/** The tracking service's HTTP app: /o, /c, /u plus the platform's /healthz /readyz (/metrics: the ops port only). */
export function buildTrackingApp(
  deps: RouteDeps,
  opts: { trustProxy: TrustProxy; readiness?: Record<string, ReadinessCheck> },
): Express {
  return createHttpApp({
    logger: deps.logger,
    ignoreBodies: true,
    ...(opts.readiness ? { readiness: opts.readiness } : {}),
    routes: (app) => {
      app.set('trust proxy', opts.trustProxy);
      openRoute(app, deps);
      clickRoute(app, deps);
      unsubscribeRoute(app, deps);
    },
  });
}
