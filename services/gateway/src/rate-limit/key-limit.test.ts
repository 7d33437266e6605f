import { HttpError, type Kv, createLogger, createMemoryKv, metricsRegistry } from '@mailyard/platform';
import { keyLimit } from './key-limit';

const logger = createLogger('key-limit-test', 'error');

describe('keyLimit', () => {
  let kv: Kv;
  beforeEach(() => {
    kv = createMemoryKv();
  });
  afterEach(() => kv.close());

  it('lets `limit` hits of a key through per window, then answers 429 with the message and Retry-After', async () => {
    const hit = keyLimit(kv, logger, { limit: 2, windowMs: 3_600_000, message: 'too many replays' });
    const started = Date.now();
    await hit('a');
    await hit('a');
    const over = await hit('a').catch((e: unknown) => e);
    expect(over).toBeInstanceOf(HttpError);
    expect(over).toMatchObject({ status: 429, message: 'too many replays' });
    const windowEnd = (Math.floor(started / 3_600_000) + 1) * 3_600_000;
    const retryAfter = Number((over as HttpError).headers?.['Retry-After']);
    expect(retryAfter).toBeGreaterThanOrEqual(Math.ceil((windowEnd - Date.now()) / 1000));
    expect(retryAfter).toBeLessThanOrEqual(Math.ceil((windowEnd - started) / 1000));
    // Another key has its own budget.
    await expect(hit('b')).resolves.toBeUndefined();
  });

  it('fails open when the kv store fails, counting it', async () => {
    const failing = { hitWindow: () => Promise.reject(new Error('kv down')) };
    const warn = jest.fn();
    const hit = keyLimit(failing, { ...logger, warn } as never, { limit: 1, windowMs: 1000, message: 'x' });
    const before = await metricsRegistry.getSingleMetricAsString('mailyard_rate_limit_fail_open_total');
    for (let i = 0; i < 3; i++) await expect(hit('a')).resolves.toBeUndefined();
    const after = await metricsRegistry.getSingleMetricAsString('mailyard_rate_limit_fail_open_total');
    const count = (s: string) => Number(/ (\d+)$/m.exec(s)?.[1] ?? 0);
    expect(count(after) - count(before)).toBe(3);
    expect(warn).toHaveBeenCalledTimes(1);
  });
});
