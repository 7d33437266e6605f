/**
 * Gateway benchmark: autocannon against GET /v1/email/template/{id} and POST /v1/email/template
 * on a gateway process backed by the real PostgreSQL, RabbitMQ and Redis, beside a bare express
 * hello-world measured in the same run. Prints JSON (req/s, p50, p99, ratio to bare express).
 *
 *   pnpm bench:gateway                  # 10 s per scenario, 50 connections
 *   BENCH_SECONDS=20 BENCH_CONNECTIONS=100 pnpm bench:gateway
 */
import { freePort, spawnTs } from '@mailyard/testkit/process';
import { createTestDatabase, createTestVhost, serverEnv } from '@mailyard/testkit/servers';
import autocannon from 'autocannon';
import { printAndKeep, runMain } from '../support/proc';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const KEY = 'myk_bench_bootstrap_key_0123456789abcdefghijkl';

interface Result {
  requests_per_sec: number;
  p50_ms: number;
  p99_ms: number;
  non_2xx: number;
  errors: number;
}

async function load(opts: autocannon.Options): Promise<Result> {
  const r = await autocannon({ connections: CONNECTIONS, duration: SECONDS, ...opts });
  return {
    requests_per_sec: Math.round(r.requests.average),
    p50_ms: r.latency.p50,
    p99_ms: r.latency.p99,
    non_2xx: r.non2xx,
    errors: r.errors + r.timeouts,
  };
}

async function main(): Promise<void> {
  const db = await createTestDatabase();
  const vhost = createTestVhost();
  const gwPort = await freePort();
  const barePort = await freePort();
  const gateway = spawnTs('services/gateway/src/main.ts', {
    PORT: String(gwPort),
    ...serverEnv(db, vhost),
    BOOTSTRAP_API_KEY: KEY,
    BOOTSTRAP_TIER: 'enterprise',
    RATE_LIMIT_ENTERPRISE: '1000000000',
    LOG_LEVEL: 'warn',
    NODE_ENV: 'production',
  });
  const bare = spawnTs('bench/gateway/bare-express.ts', { PORT: String(barePort), NODE_ENV: 'production' });
  try {
    await gateway.waitFor(/started/);
    await bare.waitFor(/listening/);
    const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
    const body = JSON.stringify({
      name: 'Bench',
      subject: 'Hello {{name}}',
      content: [{ type: 'text/html', value: '<p>Hello {{name}}, this is a benchmark template.</p>' }],
    });
    const created = await fetch(`http://127.0.0.1:${gwPort}/v1/email/template`, {
      method: 'POST',
      headers,
      body,
    });
    const { template_id } = (await created.json()) as { template_id: string };

    // Warm up JIT and connection pools before measuring.
    await autocannon({ url: `http://127.0.0.1:${barePort}/hello`, connections: 10, duration: 2 });
    await autocannon({
      url: `http://127.0.0.1:${gwPort}/v1/email/template/${template_id}`,
      headers,
      connections: 10,
      duration: 2,
    });

    const bareResult = await load({ url: `http://127.0.0.1:${barePort}/hello` });
    const getResult = await load({
      url: `http://127.0.0.1:${gwPort}/v1/email/template/${template_id}`,
      headers,
    });
    const postResult = await load({
      url: `http://127.0.0.1:${gwPort}/v1/email/template`,
      method: 'POST',
      headers,
      body,
    });

    const ratio = (r: Result) => Number((r.requests_per_sec / bareResult.requests_per_sec).toFixed(3));
    const report = {
      benchmark: 'gateway',
      at: new Date().toISOString(),
      connections: CONNECTIONS,
      seconds_per_scenario: SECONDS,
      bare_express: bareResult,
      get_template: { ...getResult, ratio_to_bare: ratio(getResult) },
      post_template: { ...postResult, ratio_to_bare: ratio(postResult) },
      aims: { get_ratio_at_least: 0.4, get_p99_ms_under: 20 },
    };
    printAndKeep('gateway', report);
  } finally {
    gateway.child.kill('SIGTERM');
    bare.child.kill('SIGTERM');
    await Promise.all([gateway.exited, bare.exited]);
    await db.drop();
    await vhost.drop();
  }
}

runMain(main);
