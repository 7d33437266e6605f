/** GET /openapi.json: public (no key), outside /v1. The page rendering it, /docs, is served with the dashboard (dashboard/routes.ts). */
import { Router } from 'express';
import { buildOpenApiDocument } from './document';

export function openApiRoutes(): Router {
  const router = Router();
  router.get('/openapi.json', (_req, res) => {
    res.json(buildOpenApiDocument());
  });
  return router;
}
