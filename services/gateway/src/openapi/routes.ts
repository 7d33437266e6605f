/** GET /openapi.json and GET /docs: public (no key), outside /v1. */
import { Router } from 'express';
import { buildOpenApiDocument } from './document';
import { renderDocsHtml } from './html';

export function openApiRoutes(): Router {
  const router = Router();
  let html: string | undefined;
  router.get('/openapi.json', (_req, res) => {
    res.json(buildOpenApiDocument());
  });
  router.get('/docs', (_req, res) => {
    html ??= renderDocsHtml(buildOpenApiDocument());
    res.setHeader('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'");
    res.type('html').send(html);
  });
  return router;
}
