import {
  HttpError,
  type Kv,
  type Logger,
  createLogger,
  createMemoryKv,
  metricsRegistry,
} from '@mailyard/platform';
import type { Response } from 'express';
import { rateLimit } from './rate-limit';

/** The middleware against the in-process kv, as one request of `tenantId` would run it. */
function limiter(kv: Kv, windowMs = 3_600_000, logger: Logger = createLogger('rate-limit-test', 'error')) {
  const mw = rateLimit(kv, logger, {
    limits: { standard: 3, enterprise: 5 },
    windowMs,
  });
  return async (tenantId: string, tier: 'standard' | 'enterprise' = 'standard') => {
    const headers: Record<string, string> = {};
    const res = {
      locals: { owner: { tenantId, tier } },
      setHeader: (name: string, value: string) => {
        headers[name] = value;
      },
    } as unknown as Response;
    let passed = false;
    let error: unknown;
    try {
      await mw({} as never, res, () => {
        passed = true;
      });
    } catch (err) {
      error = err;
    }
    return { passed, error, headers };
  };
}

describe('rateLimit', () => {
  let kv: Kv;
  beforeEach(() => {
    kv = createMemoryKv();
  });
  afterEach(async () => {
    await kv.close();
  });

  it('lets `limit` requests through per window, counting down, then answers 429 with Retry-After', async () => {
    const hit = limiter(kv);
    const now = Date.now();
    const results = [];
    for (let i = 0; i < 5; i++) results.push(await hit('t1'));
    expect(results.map((r) => r.passed)).toEqual([true, true, true, false, false]);
    expect(results.map((r) => r.headers['X-RateLimit-Limit'])).toEqual(['3', '3', '3', '3', '3']);
    expect(results.map((r) => r.headers['X-RateLimit-Remaining'])).toEqual(['2', '1', '0', '0', '0']);
    const windowEnd = (Math.floor(now / 3_600_000) + 1) * 3600;
    for (const r of results) expect(Number(r.headers['X-RateLimit-Reset'])).toBe(windowEnd);
    for (const r of results.slice(3)) {
      expect(r.error).toBeInstanceOf(HttpError);
      const e = r.error as HttpError;
      expect(e.status).toBe(429);
      expect(e.message).toBe('Rate limit exceeded');
      // Seconds to the end of the window, rounded up: between its value now and before the requests.
      const retryAfter = Number(e.headers?.['Retry-After']);
      expect(retryAfter).toBeGreaterThanOrEqual(Math.ceil((windowEnd * 1000 - Date.now()) / 1000));
      expect(retryAfter).toBeLessThanOrEqual(Math.ceil((windowEnd * 1000 - now) / 1000));
    }
    for (const r of results.slice(0, 3)) expect(r.error).toBeUndefined();
  });

  it('gives each tier its limit and each tenant its own budget', async () => {
    const hit = limiter(kv);
    for (let i = 0; i < 5; i++) expect((await hit('big', 'enterprise')).passed).toBe(true);
    const over = await hit('big', 'enterprise');
    expect(over.passed).toBe(false);
    expect(over.headers['X-RateLimit-Limit']).toBe('5');
    const other = await hit('small');
    expect(other).toMatchObject({ passed: true, headers: { 'X-RateLimit-Remaining': '2' } });
  });

  it('rounds the reset up to whole seconds and never asks to retry in less than 1 s', async () => {
    // A 1 ms window ends within a second: Reset is rounded up, Retry-After is at least 1.
    const hit = limiter(kv, 1);
    const results = [];
    for (let i = 0; i < 200; i++) results.push(await hit('fast'));
    for (const r of results) {
      const reset = Number(r.headers['X-RateLimit-Reset']);
      expect(Number.isInteger(reset)).toBe(true);
      expect(reset * 1000).toBeGreaterThanOrEqual(Date.now() - 1000);
      if (r.error) expect((r.error as HttpError).headers?.['Retry-After']).toBe('1');
    }
  });

  it('fails open without budget headers when the kv store fails', async () => {
    const broken: Kv = {
      ...createMemoryKv(),
      hitWindow: () => Promise.reject(new Error('kv down')),
    };
    const hit = limiter(broken);
    for (let i = 0; i < 5; i++) {
      const r = await hit('t1');
      expect(r).toEqual({ passed: true, error: undefined, headers: {} });
    }
    await broken.close();
  });

  it('warns once per 10 s while the kv store fails, with the error', async () => {
    const broken: Kv = { ...createMemoryKv(), hitWindow: () => Promise.reject(new Error('kv down')) };
    const logger = createLogger('rate-limit-test', 'warn');
    const logs: Array<{ level: string; message: string; error?: string }> = [];
    logger.on('data', (l) => logs.push(l));
    const hit = limiter(broken, 3_600_000, logger);
    for (let i = 0; i < 3; i++) await hit('t1');
    expect(logs.map((l) => [l.level, l.message, l.error])).toEqual([
      ['warn', 'rate limit store unavailable, failing open', 'kv down'],
    ]);
    await broken.close();
  });

  it('counts 429 answers per tier', async () => {
    const rejected = async (tier: string) =>
      (await metricsRegistry.getSingleMetric('mailyard_rate_limited_total')?.get())?.values.find(
        (v) => v.labels.tier === tier,
      )?.value ?? 0;
    const before = await rejected('enterprise');
    const hit = limiter(kv);
    for (let i = 0; i < 7; i++) await hit('counted', 'enterprise');
    expect(await rejected('enterprise')).toBe(before + 2);
  });
});
