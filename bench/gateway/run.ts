/**
 * Gateway benchmark: autocannon against GET /v1/email/template/{id} and POST /v1/email/template
 * on the compiled gateway (dist/bin/gateway.js, as production runs it; built first when stale)
 * backed by the real PostgreSQL, RabbitMQ and Redis, beside a bare express hello-world measured
 * in the same run. `BENCH_ROUNDS` rounds each measure bare, GET and POST back to back, so a
 * ratio compares figures taken within seconds of each other on a machine whose load moves; the
 * report gives each round and the median ratio. Besides req/s it reports the process CPU time
 * per request (from /proc/<pid>/stat), which a loaded machine disturbs far less than throughput.
 *
 *   pnpm bench:gateway                  # 3 rounds, 10 s per scenario, 50 connections
 *   BENCH_SECONDS=20 BENCH_CONNECTIONS=100 BENCH_ROUNDS=5 pnpm bench:gateway
 *   BENCH_CPU_PROF=1 pnpm bench:gateway # also --cpu-prof the gateway: profile kept in
 *                                       # bench/results/, its top self-time functions in the JSON
 *   BENCH_GATEWAY_DIR=/tmp/old pnpm bench:gateway  # the gateway of another checkout (installed;
 *                                       # run from its TypeScript with tsx), for a before/after
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT, type Spawned, freePort, spawnNode, spawnTs } from '@mailyard/testkit/process';
import { createTestDatabase, createTestVhost, serverEnv } from '@mailyard/testkit/servers';
import autocannon from 'autocannon';
import { type Window, monotonicUs, readProfiles, summarize } from '../support/profile';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CPU_PROF = process.env.BENCH_CPU_PROF === '1';
const GATEWAY_DIR = process.env.BENCH_GATEWAY_DIR;
const KEY = 'myk_bench_bootstrap_key_0123456789abcdefghijkl';
const RESULTS = join(REPO_ROOT, 'bench', 'results');
const CLOCK_TICKS = 100; // USER_HZ on Linux

interface Result {
  requests_per_sec: number;
  p50_ms: number;
  p99_ms: number;
  non_2xx: number;
  errors: number;
  /** Server process CPU (user + system) per completed request. */
  cpu_us_per_request: number;
  /** Its user part: the process's own code, which a machine busy with system calls disturbs least. */
  user_us_per_request: number;
}

/** CPU seconds (user, system) a process has used so far. */
function cpuSeconds(pid: number): { user: number; system: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { user: Number(fields[11]) / CLOCK_TICKS, system: Number(fields[12]) / CLOCK_TICKS };
}

/** When each gateway scenario ran (CLOCK_MONOTONIC µs, the clock of the V8 profile's samples). */
const windows: Record<string, Window[]> = {};

async function load(server: Spawned, opts: autocannon.Options, scenario: string): Promise<Result> {
  const cpu0 = cpuSeconds(server.child.pid!);
  const fromUs = monotonicUs();
  const r = await autocannon({ connections: CONNECTIONS, duration: SECONDS, ...opts });
  windows[scenario] = [...(windows[scenario] ?? []), { fromUs, toUs: monotonicUs() }];
  const cpu1 = cpuSeconds(server.child.pid!);
  const perRequest = (seconds: number) => Math.round((seconds * 1e6) / Math.max(1, r.requests.total));
  return {
    requests_per_sec: Math.round(r.requests.average),
    p50_ms: r.latency.p50,
    p99_ms: r.latency.p99,
    non_2xx: r.non2xx,
    errors: r.errors + r.timeouts,
    cpu_us_per_request: perRequest(cpu1.user + cpu1.system - cpu0.user - cpu0.system),
    user_us_per_request: perRequest(cpu1.user - cpu0.user),
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

async function main(): Promise<void> {
  const db = await createTestDatabase();
  const vhost = createTestVhost();
  const gwPort = await freePort();
  const barePort = await freePort();
  const profDir = join(RESULTS, `gateway-cpuprofile-${Date.now()}`);
  const entry = GATEWAY_DIR
    ? ['--import', 'tsx', join(GATEWAY_DIR, 'services/gateway/src/main.ts')]
    : ['scripts/run-dist.mjs', 'gateway'];
  const gateway = spawnNode([...(CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', profDir] : []), ...entry], {
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
    await gateway.waitFor(/started/, 240_000);
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
    const bareUrl = `http://127.0.0.1:${barePort}/hello`;
    const getUrl = `http://127.0.0.1:${gwPort}/v1/email/template/${template_id}`;
    const postUrl = `http://127.0.0.1:${gwPort}/v1/email/template`;

    // Warm up JIT and connection pools before measuring.
    await autocannon({ url: bareUrl, connections: 10, duration: 2 });
    await autocannon({ url: getUrl, headers, connections: 10, duration: 2 });

    const rounds = [];
    for (let i = 0; i < ROUNDS; i++) {
      const bareResult = await load(bare, { url: bareUrl }, 'bare');
      const getResult = await load(gateway, { url: getUrl, headers }, 'get_template');
      const postResult = await load(
        gateway,
        { url: postUrl, method: 'POST', headers, body },
        'post_template',
      );
      const ratio = (r: Result) => Number((r.requests_per_sec / bareResult.requests_per_sec).toFixed(3));
      const cpuRatio = (r: Result) =>
        Number((bareResult.cpu_us_per_request / r.cpu_us_per_request).toFixed(3));
      const userRatio = (r: Result) =>
        Number((bareResult.user_us_per_request / r.user_us_per_request).toFixed(3));
      rounds.push({
        bare_express: bareResult,
        get_template: {
          ...getResult,
          ratio_to_bare: ratio(getResult),
          cpu_ratio_to_bare: cpuRatio(getResult),
          user_cpu_ratio_to_bare: userRatio(getResult),
        },
        post_template: {
          ...postResult,
          ratio_to_bare: ratio(postResult),
          cpu_ratio_to_bare: cpuRatio(postResult),
          user_cpu_ratio_to_bare: userRatio(postResult),
        },
      });
    }

    gateway.child.kill('SIGTERM');
    await gateway.exited;
    let profile: Record<string, unknown> | undefined;
    if (CPU_PROF) {
      const profiles = readProfiles(profDir);
      if (profiles.length > 0) {
        // With no window a scenario would count every sample: only those that ran are summarized.
        const of = (scenario: string) =>
          windows[scenario] ? summarize(profiles, GATEWAY_DIR ?? REPO_ROOT, windows[scenario]) : undefined;
        profile = { dir: profDir, get_template: of('get_template'), post_template: of('post_template') };
      }
    }

    const report = {
      benchmark: 'gateway',
      at: new Date().toISOString(),
      gateway: GATEWAY_DIR ? `${GATEWAY_DIR} (tsx)` : 'dist/bin/gateway.js',
      connections: CONNECTIONS,
      seconds_per_scenario: SECONDS,
      rounds,
      median: {
        get_ratio_to_bare: median(rounds.map((r) => r.get_template.ratio_to_bare)),
        post_ratio_to_bare: median(rounds.map((r) => r.post_template.ratio_to_bare)),
        get_cpu_ratio_to_bare: median(rounds.map((r) => r.get_template.cpu_ratio_to_bare)),
        post_cpu_ratio_to_bare: median(rounds.map((r) => r.post_template.cpu_ratio_to_bare)),
        get_user_cpu_ratio_to_bare: median(rounds.map((r) => r.get_template.user_cpu_ratio_to_bare)),
        post_user_cpu_ratio_to_bare: median(rounds.map((r) => r.post_template.user_cpu_ratio_to_bare)),
        bare_cpu_us_per_request: median(rounds.map((r) => r.bare_express.cpu_us_per_request)),
        get_cpu_us_per_request: median(rounds.map((r) => r.get_template.cpu_us_per_request)),
        post_cpu_us_per_request: median(rounds.map((r) => r.post_template.cpu_us_per_request)),
        bare_user_us_per_request: median(rounds.map((r) => r.bare_express.user_us_per_request)),
        get_user_us_per_request: median(rounds.map((r) => r.get_template.user_us_per_request)),
        post_user_us_per_request: median(rounds.map((r) => r.post_template.user_us_per_request)),
      },
      profile,
      aims: { get_ratio_at_least: 0.5, get_p99_ms_under: 20 },
    };
    const json = JSON.stringify(report, null, 2);
    process.stdout.write(`${json}\n`);
    mkdirSync(RESULTS, { recursive: true });
    writeFileSync(join(RESULTS, `gateway-${Date.now()}.json`), json);
  } finally {
    if (gateway.child.exitCode === null) gateway.child.kill('SIGTERM');
    bare.child.kill('SIGTERM');
    await Promise.all([gateway.exited, bare.exited]);
    await db.drop();
    await vhost.drop();
  }
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exit(1);
});
