import express, { Router } from 'express';
import request from 'supertest';
import { prefixedRouter, routePrefixes } from './prefixed-router';

function things(): Router {
  const router = Router();
  router.get('/v1/things/:id', (req, res) => {
    res.json({ route: 'get thing', id: req.params.id });
  });
  router.post('/v1/things', (_req, res) => {
    res.json({ route: 'post things' });
  });
  router.all('/v1/thing', (_req, res) => {
    res.json({ route: 'all thing' });
  });
  return router;
}

/** The same routers mounted plainly and through prefixedRouter, with a 404 after them. */
function apps() {
  const build = (wrap: (r: Router) => express.RequestHandler) => {
    const app = express();
    app.use(wrap(things()));
    const other = Router();
    other.get('/v1/other/:x', (_req, res) => {
      res.json({ route: 'other' });
    });
    app.use(wrap(other));
    app.use((_req, res) => {
      res.status(404).json({ route: 'none' });
    });
    return app;
  };
  return { plain: build((r) => r), prefixed: build(prefixedRouter) };
}

describe('routePrefixes', () => {
  it('takes the static part of every route path, lower-cased', () => {
    const router = Router();
    router.get('/v1/Things/:id', () => {});
    router.post('/v1/things', () => {});
    router.get('/files/*rest', () => {});
    router.get(['/a/b', '/c{/:d}'], () => {});
    expect(routePrefixes(router)?.sort()).toEqual(
      ['/a/b', '/c', '/files/', '/v1/things', '/v1/things/'].sort(),
    );
  });

  it('gives up (always enter) on path-less middleware and non-string paths', () => {
    const withMiddleware = Router();
    withMiddleware.use((_req, _res, next) => next());
    withMiddleware.get('/v1/x', () => {});
    expect(routePrefixes(withMiddleware)).toBeNull();
    const withRegExp = Router();
    withRegExp.get(/^\/v1\/y/, () => {});
    expect(routePrefixes(withRegExp)).toBeNull();
  });
});

describe('prefixedRouter', () => {
  const { plain, prefixed } = apps();
  const cases: Array<[string, string]> = [
    ['GET', '/v1/things/42'],
    ['GET', '/V1/THINGS/42'],
    ['GET', '/v1/things/42/'],
    ['GET', '/v1/things/%34%32'],
    ['GET', '/v1/%74hings/42'],
    ['GET', '/v1/things'],
    ['POST', '/v1/things'],
    ['POST', '/v1/things/'],
    ['DELETE', '/v1/thing'],
    ['GET', '/v1/thing/'],
    ['HEAD', '/v1/things/1'],
    ['GET', '/v1/other/1'],
    ['GET', '/v1/thingsx/1'],
    ['GET', '/v1/nothing'],
    ['GET', '/'],
    ['GET', '/v1/things/1?x=/v1/other/2'],
  ];

  it.each(cases)('answers %s %s exactly as the plainly mounted router does', async (method, path) => {
    const send = (app: express.Express) =>
      request(app)
        [method.toLowerCase() as 'get'](path)
        .then((r) => ({ status: r.status, body: r.body }));
    expect(await send(prefixed)).toEqual(await send(plain));
  });

  it('shows the routes of the router it wraps to code that walks the layers', () => {
    const router = things();
    expect((prefixedRouter(router) as unknown as { stack: unknown }).stack).toBe(router.stack);
  });

  it('does not enter a router whose routes cannot match the path', async () => {
    const router = things();
    let entered = 0;
    const counting = Object.assign(
      (req: express.Request, res: express.Response, next: express.NextFunction) => {
        entered++;
        return router(req, res, next);
      },
      router,
    ) as unknown as Router;
    const app = express();
    app.use(prefixedRouter(counting));
    app.use((_req, res) => {
      res.status(404).end();
    });
    await request(app).get('/v1/other/1').expect(404);
    expect(entered).toBe(0);
    await request(app).get('/v1/things/1').expect(200);
    expect(entered).toBe(1);
  });
});
