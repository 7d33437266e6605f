/**
 * The gateway while a dependency is down: a request that needs PostgreSQL (every /v1 request:
 * the API key is read from it) or Redis (an OAuth login keeps its pending state there) is
 * answered 503 with Retry-After and the spec's error envelope, /readyz fails naming the
 * dependency, and both recover by themselves once it is back. The gateway runs in this process
 * (supertest over real HTTP) against a private PostgreSQL and a private Redis that this test
 * starts and stops (the shared servers are never touched) and the shared RabbitMQ (own vhost).
 */
import { ErrorText } from '@mailyard/contracts';
import { buildGatewayApp } from '@mailyard/gateway';
import {
  type ServiceContext,
  closeContext,
  configFrom,
  createLogger,
  openContext,
  storeReadiness,
} from '@mailyard/platform';
import { createTenant } from '@mailyard/store';
import {
  type PrivatePostgres,
  type PrivateServer,
  startPrivatePostgres,
  startPrivateRedis,
} from '@mailyard/testkit/private-servers';
import { TEST_SECRET_KEY, type TestVhost, createTestVhost } from '@mailyard/testkit/servers';
import { eventually } from '@mailyard/testkit/webhooks';
import request from 'supertest';

jest.setTimeout(180_000);

let postgres: PrivatePostgres;
let redis: PrivateServer;
let vhost: TestVhost;
let ctx: ServiceContext;
let app: ReturnType<typeof buildGatewayApp>;
let auth: { Authorization: string };

beforeAll(async () => {
  [postgres, redis] = await Promise.all([startPrivatePostgres(), startPrivateRedis()]);
  vhost = createTestVhost();
  const config = configFrom({
    DATABASE_URL: await postgres.createDatabase('mailyard'),
    REDIS_URL: redis.url,
    AMQP_URL: vhost.url,
    SECRET_KEY: TEST_SECRET_KEY,
    // Every request reads its key from the database.
    API_KEY_CACHE_MS: '0',
    OAUTH_REDIRECT_URI: 'https://api.example.test/v1/oauth/callback',
  });
  ctx = await openContext(config, createLogger('outage-test', process.env.TEST_LOG_LEVEL ?? 'error'));
  app = buildGatewayApp(ctx, storeReadiness(ctx));
  const tenant = await createTenant(ctx.db, { name: 'outage', tier: 'enterprise' });
  auth = { Authorization: `Bearer ${tenant.apiKey}` };
});

afterAll(async () => {
  if (ctx) await closeContext(ctx);
  await Promise.allSettled([postgres?.destroy(), redis?.destroy(), vhost?.drop()]);
});

const outageBody = (details: string) => ({ success: false, error: ErrorText.unavailable, details });

function expectOutage(res: request.Response, details: string): void {
  expect(res.status).toBe(503);
  expect(res.headers['retry-after']).toMatch(/^[1-9]\d*$/);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.body).toEqual(outageBody(details));
}

const ready = async () => (await request(app).get('/readyz')).status === 200 || null;

describe('PostgreSQL down', () => {
  it('reads and writes answer 503 + Retry-After + envelope, /readyz fails on db; all recover once it is back', async () => {
    const template = { name: 'before', subject: 'hi', content: [{ type: 'text/plain', value: 'x' }] };
    await request(app).post('/v1/email/template').set(auth).send(template).expect(201);
    expect((await request(app).get('/readyz')).status).toBe(200);

    await postgres.stop();

    // A pooled connection the server closed, then refused new connections: both are outages.
    for (let i = 0; i < 3; i++) {
      expectOutage(await request(app).get('/v1/email/templates').set(auth), ErrorText.databaseUnavailable);
      expectOutage(
        await request(app)
          .post('/v1/email/template')
          .set(auth)
          .send({ ...template, name: `during-${i}` }),
        ErrorText.databaseUnavailable,
      );
    }
    const readyz = await request(app).get('/readyz');
    expect(readyz.status).toBe(503);
    expect(readyz.body).toMatchObject({
      status: 'not ready',
      checks: { db: expect.stringMatching(/^failing: /), kv: 'ok', bus: 'ok' },
    });
    // Liveness is not readiness: the process is fine.
    expect((await request(app).get('/healthz')).status).toBe(200);

    await postgres.start();

    await eventually(ready, '/readyz 200 after PostgreSQL is back');
    const list = await eventually(async () => {
      const r = await request(app).get('/v1/email/templates').set(auth);
      return r.status === 200 ? r : null;
    }, 'templates listed after PostgreSQL is back');
    // Nothing was written while it was down; what was written before is still there.
    expect(list.body.templates.map((t: { name: string }) => t.name)).toEqual(['before']);
    await request(app)
      .post('/v1/email/template')
      .set(auth)
      .send({ ...template, name: 'after' })
      .expect(201);
  });
});

describe('Redis down', () => {
  it('a request that needs the kv (OAuth login state) answers 503 naming it; the others still work', async () => {
    const appRes = await request(app)
      .post('/v1/oauth/apps')
      .set(auth)
      .send({ provider: 'google', client_id: 'g-client', client_secret: 'g-secret' })
      .expect(201);
    const login = { app_id: appRes.body.app_id, type: 'imap' };
    const ok = await request(app).post('/v1/oauth/login').set(auth).send(login);
    expect(ok.status).toBe(200);

    await redis.stop();

    expectOutage(await request(app).post('/v1/oauth/login').set(auth).send(login), ErrorText.kvUnavailable);
    // Rate limits fail open: a request that needs only the database is served.
    expect((await request(app).get('/v1/email/templates').set(auth)).status).toBe(200);
    const readyz = await request(app).get('/readyz');
    expect(readyz.status).toBe(503);
    expect(readyz.body.checks).toMatchObject({ db: 'ok', kv: expect.stringMatching(/^failing: /) });

    await redis.start();

    await eventually(ready, '/readyz 200 after Redis is back');
    await eventually(
      async () => (await request(app).post('/v1/oauth/login').set(auth).send(login)).status === 200 || null,
      'OAuth login after Redis is back',
    );
  });
});
