import { type ReadinessCheck, createHttpApp } from '@mailyard/platform';
import type { Express } from 'express';
import { type CallbackRouteDeps, sparkPostCallbackRoute } from './callbacks/sparkpost-route';
import { clickRoute } from './routes/click';
import type { RouteDeps } from './routes/deps';
import { openRoute } from './routes/open';
import { unsubscribeRoute } from './routes/unsubscribe';
import type { TrustProxy } from './settings';

/**
 * The tracking service's HTTP app: /o, /c, /u, the provider callbacks (POST /callbacks/sparkpost/:id)
 * plus the platform's /healthz /readyz (/metrics: the ops port only). Bodies are drained unread,
 * except a callback's: its route is mounted among the guards, in front of the drain, and reads its
 * body itself after authentication (callbacks/sparkpost-route.ts).
 */
export function buildTrackingApp(
  deps: RouteDeps & { callbacks?: CallbackRouteDeps },
  opts: { trustProxy: TrustProxy; readiness?: Record<string, ReadinessCheck> },
): Express {
  return createHttpApp({
    logger: deps.logger,
    ignoreBodies: true,
    ...(opts.readiness ? { readiness: opts.readiness } : {}),
    guards: (app) => {
      sparkPostCallbackRoute(app, deps.callbacks ?? { db: deps.db, onStored: () => {} });
    },
    routes: (app) => {
      app.set('trust proxy', opts.trustProxy);
      openRoute(app, deps);
      clickRoute(app, deps);
      unsubscribeRoute(app, deps);
    },
  });
}
