/**
 * Per-tenant rate limits: one fixed-window budget shared by every gateway replica (Redis), the
 * same rule on the in-process kv (embedded mode), and fail-open when Redis is down.
 *
 * The windows are an hour long so a test's requests fall into one window; a run whose
 * X-RateLimit-Reset changed between readings (the window rolled over) is run again with a fresh
 * tenant, so no reading is ever skipped.
 */
import { storeReadiness } from '@mailyard/platform';
import request, { type Response } from 'supertest';
import { buildGatewayApp } from '../src/app';
import {
  type SharedStores,
  type TestGateway,
  bearer,
  createStores,
  startGateway,
  useGateway,
} from './support/harness';

const WINDOW_SECONDS = 3600;

/**
 * Sends `n` requests as one new tenant, taking turns over `gateways`, all within one window.
 * Returns every response with the tenant's key.
 */
async function oneWindow(
  gateways: Array<Pick<TestGateway, 'app' | 'newTenant'>>,
  n: number,
  tier: 'standard' | 'enterprise' = 'standard',
): Promise<{ responses: Response[]; apiKey: string }> {
  for (let run = 0; run < 3; run++) {
    const { apiKey } = await gateways[0]!.newTenant(tier);
    const responses: Response[] = [];
    for (let i = 0; i < n; i++) {
      const gw = gateways[i % gateways.length]!;
      responses.push(await request(gw.app).get('/v1/email/templates').set(bearer(apiKey)));
    }
    if (new Set(responses.map((r) => r.headers['x-ratelimit-reset'])).size === 1)
      return { responses, apiKey };
  }
  throw new Error('the rate-limit window rolled over in three runs in a row');
}

/** Checks the budget headers of every reading and the 429 answers after the budget is spent. */
function expectBudget(responses: Response[], limit: number): void {
  const now = Date.now() / 1000;
  expect(responses.map((r) => r.status)).toEqual(responses.map((_, i) => (i < limit ? 200 : 429)));
  expect(responses.map((r) => r.headers['x-ratelimit-limit'])).toEqual(responses.map(() => String(limit)));
  // Counts down one per request, then stays at 0.
  expect(responses.map((r) => Number(r.headers['x-ratelimit-remaining']))).toEqual(
    responses.map((_, i) => Math.max(0, limit - 1 - i)),
  );
  for (const r of responses) {
    const reset = Number(r.headers['x-ratelimit-reset']);
    expect(reset).toBeGreaterThan(now - 1);
    expect(reset).toBeLessThanOrEqual(Math.ceil(now) + WINDOW_SECONDS);
    expect(reset % WINDOW_SECONDS).toBe(0); // the end of a fixed window
  }
  for (const over of responses.slice(limit)) {
    expect(over.body).toEqual({ success: false, error: 'Rate limit exceeded' });
    const retryAfter = Number(over.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(WINDOW_SECONDS);
    // Retry-After points at the end of the window the Reset header names.
    expect(Math.abs(now + retryAfter - Number(over.headers['x-ratelimit-reset']))).toBeLessThanOrEqual(60);
  }
}

describe('rate limits on the real Redis', () => {
  let stores: SharedStores;
  let a: TestGateway;
  let b: TestGateway;

  beforeAll(async () => {
    stores = await createStores('servers');
    const limits = {
      RATE_LIMIT_STANDARD: '5',
      RATE_LIMIT_ENTERPRISE: '8',
      RATE_LIMIT_WINDOW_SECONDS: String(WINDOW_SECONDS),
    };
    a = await startGateway(stores, limits);
    b = await startGateway(stores, limits);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await stores?.drop();
  });

  it('shares one budget between two gateway instances and answers 429 with Retry-After', async () => {
    const { responses } = await oneWindow([a, b], 7);
    expectBudget(responses, 5);
  });

  it('gives enterprise tenants their own, larger budget', async () => {
    const { responses } = await oneWindow([a, b], 10, 'enterprise');
    expectBudget(responses, 8);
  });

  it('counts tenants separately', async () => {
    const spent = await oneWindow([a, b], 6);
    expect(spent.responses.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 429]);
    const fresh = await oneWindow([b], 1);
    expect(fresh.responses[0]!.status).toBe(200);
    expect(fresh.responses[0]!.headers['x-ratelimit-remaining']).toBe('4');
  });
});

describe('rate limits in embedded mode (in-process kv)', () => {
  const gw = useGateway('embedded', {
    RATE_LIMIT_STANDARD: '3',
    RATE_LIMIT_WINDOW_SECONDS: String(WINDOW_SECONDS),
  });

  it('counts every request and answers 429 once the budget is spent', async () => {
    const { responses } = await oneWindow([gw], 5);
    expectBudget(responses, 3);
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
    // The gateway's /readyz as the service wires it (services/gateway/src/index.ts).
    const app = buildGatewayApp(gw.ctx, storeReadiness(gw.ctx));
    const ready = await request(app).get('/readyz');
    expect(ready.status).toBe(503);
    expect(ready.body).toMatchObject({
      status: 'not ready',
      checks: { db: 'ok', bus: 'ok', kv: expect.stringMatching(/^failing: /) },
    });
  });
});
