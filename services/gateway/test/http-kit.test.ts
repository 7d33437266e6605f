import { HttpError, createHttpApp, createLogger, createOpsApp } from '@mailyard/platform';
import request from 'supertest';
import { useGateway } from './support/harness';

describe('http kit behaviour through the gateway (embedded)', () => {
  const gw = useGateway('embedded', { HTTP_BODY_LIMIT: '2kb' });

  it('answers bodies over the limit with 413', async () => {
    const res = await gw.post('/v1/email/template', { name: 'x'.repeat(5000), subject: 's', content: [] });
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ success: false, error: 'Request body too large' });
  });

  it('serves /healthz and /readyz without a key, and no /metrics (the ops port serves it)', async () => {
    expect((await request(gw.app).get('/healthz')).body).toEqual({ status: 'ok' });
    expect((await request(gw.app).get('/readyz')).body).toMatchObject({ status: 'ready' });
    for (const path of ['/metrics', '/metrics/', '/METRICS'])
      await request(gw.app).get(path).expect(404, { success: false, error: 'Not found' });
    // With a tenant's key it is not there either.
    await gw.get('/metrics').expect(404);
  });

  it('the ops app serves /metrics with every route of the process, beside /healthz and /readyz', async () => {
    await gw.get('/v1/email/templates').expect(200);
    const ops = createOpsApp({ logger: createLogger('test', 'error'), readiness: { db: async () => {} } });
    const metrics = await request(ops).get('/metrics').expect(200);
    expect(metrics.headers['content-type']).toMatch(/^text\/plain/);
    expect(metrics.text).toMatch(
      /^mailyard_http_request_duration_seconds_count\{[^}]*route="\/v1\/email\/templates"[^}]*\} [1-9]/m,
    );
    expect((await request(ops).get('/readyz').expect(200)).body).toEqual({
      status: 'ready',
      checks: { db: 'ok' },
    });
    expect((await request(ops).get('/healthz').expect(200)).body).toEqual({ status: 'ok' });
    await request(ops).post('/metrics').send({ a: 1 }).expect(404);
  });

  it('continues the caller trace and returns a request id', async () => {
    const parent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const res = await gw.get('/v1/email/templates').set('traceparent', parent);
    expect(res.headers.traceparent).toMatch(/^00-0af7651916cd43dd8448eb211c80319c-[0-9a-f]{16}-01$/);
    expect(res.headers['x-request-id']).toBeTruthy();
  });
});

describe('http kit error mapping', () => {
  const logs: unknown[] = [];
  const logger = createLogger('test', 'error');
  logger.on('data', (l) => logs.push(l));
  const app = createHttpApp({
    logger,
    readiness: {
      ok: async () => {},
      broken: async () => {
        throw new Error('connection refused');
      },
    },
    routes: (a) => {
      a.get('/boom', () => {
        throw new Error('secret internal detail: password=hunter2');
      });
      a.get('/async-boom', async () => {
        await Promise.resolve();
        throw new TypeError('cannot read x of undefined');
      });
      a.get('/express-400', () => {
        throw Object.assign(new Error("Failed to decode param '%E0'"), { status: 400, expose: true });
      });
      a.get('/teapot', () => {
        throw new HttpError(418, 'I am a teapot', { details: 'details here' });
      });
    },
  });

  it('hides unexpected errors behind a 500 envelope', async () => {
    for (const path of ['/boom', '/async-boom']) {
      const res = await request(app).get(path);
      expect(res.status).toBe(500);
      expect(res.body).toEqual({ success: false, error: 'Internal server error' });
      expect(res.text).not.toContain('hunter2');
    }
  });

  it('maps 4xx errors raised by express itself to the envelope without echoing them', async () => {
    const res = await request(app).get('/express-400');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ success: false, error: 'Invalid request' });
  });

  it('renders HttpError with details', async () => {
    const res = await request(app).get('/teapot');
    expect(res.status).toBe(418);
    expect(res.body).toEqual({ success: false, error: 'I am a teapot', details: 'details here' });
  });

  it('reports failing readiness checks with 503', async () => {
    const res = await request(app).get('/readyz');
    expect(res.status).toBe(503);
    expect(res.body).toEqual({
      status: 'not ready',
      checks: { ok: 'ok', broken: 'failing: connection refused' },
    });
  });
});
