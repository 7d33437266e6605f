/**
 * GET /ui (the dashboard, docs/dashboard.md) and GET /docs (Swagger UI over /openapi.json):
 * public pages (the API key is entered in the page and sent by its calls, never to these routes),
 * served from the built assets with the strict CSP (csp.ts). Hashed files under /ui/assets/ are
 * cached for a year (immutable); the HTML is `no-cache`, so a new build is picked up at once.
 * The app's own paths (/ui/{page}, /ui/{page}/{item}) answer index.html: the app routes in the
 * browser (a reload of /ui/messages lands on Messages). Each file is sent brotli- or gzip-compressed as the client
 * accepts (encoding.ts); HEAD is answered by express from GET.
 */
import { HttpError } from '@mailyard/platform';
import { type Request, type Response, Router } from 'express';
import { type Asset, type DashboardAssets, loadDashboardAssets } from './assets';
import { DASHBOARD_HEADERS } from './csp';
import { pickCoding } from './encoding';

const NOT_BUILT = 'The dashboard is not built: run `pnpm build` (it writes dist/ui)';
const IMMUTABLE = 'public, max-age=31536000, immutable';

function send(req: Request, res: Response, asset: Asset, cache: string): void {
  const coding = pickCoding(req.headers['accept-encoding']);
  const body = asset.forms[coding] ?? asset.forms.identity!;
  const used = asset.forms[coding] ? coding : 'identity';
  res.set(DASHBOARD_HEADERS);
  res.set({ 'Content-Type': asset.type, 'Cache-Control': cache, Vary: 'Accept-Encoding' });
  if (used !== 'identity') res.set('Content-Encoding', used);
  res.status(200).end(body);
}

export function dashboardRoutes(assets: DashboardAssets | undefined = loadDashboardAssets()): Router {
  const router = Router();
  const html = (name: string) => (req: Request, res: Response) => {
    const page = assets?.files.get(name);
    if (!page) throw new HttpError(503, NOT_BUILT);
    send(req, res, page, 'no-cache');
  };
  router.get('/ui/assets/:name', (req, res) => {
    const asset = assets?.files.get(`assets/${req.params.name}`);
    if (!asset) throw new HttpError(404, 'Not found');
    send(req, res, asset, IMMUTABLE);
  });
  router.get('/ui', html('index.html'));
  router.get('/ui/:page', html('index.html'));
  router.get('/ui/:page/:item', html('index.html'));
  router.get('/docs', html('docs.html'));
  return router;
}
