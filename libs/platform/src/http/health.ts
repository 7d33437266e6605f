import { type Router, Router as createRouter } from 'express';
import { metricsRegistry } from '../metrics/registry';

export type ReadinessCheck = () => Promise<void>;

const CHECK_TIMEOUT_MS = 2000;

async function runCheck(check: ReadinessCheck): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      check(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('timed out')), CHECK_TIMEOUT_MS);
      }),
    ]);
    return 'ok';
  } catch (err) {
    return `failing: ${(err as Error).message}`;
  } finally {
    clearTimeout(timer);
  }
}

/** `/healthz` (process alive) and `/readyz` (dependencies answer): on every port, public or ops. */
export function probesRouter(checks: Record<string, ReadinessCheck>): Router {
  const router = createRouter();
  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  router.get('/readyz', async (_req, res) => {
    const names = Object.keys(checks);
    const results = await Promise.all(names.map((n) => runCheck(checks[n]!)));
    const detail = Object.fromEntries(names.map((n, i) => [n, results[i]]));
    const ready = results.every((r) => r === 'ok');
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not ready', checks: detail });
  });
  return router;
}

/**
 * The ops port's routes: the probes and `/metrics` (Prometheus text: every route's request counts
 * and timings, queue and pool figures). Served on the ops port only (runtime/run.ts), never on a
 * public port: the numbers describe every tenant's traffic.
 */
export function opsRouter(checks: Record<string, ReadinessCheck>): Router {
  const router = probesRouter(checks);
  router.get('/metrics', async (_req, res) => {
    res.setHeader('Content-Type', metricsRegistry.contentType);
    res.send(await metricsRegistry.metrics());
  });
  return router;
}
