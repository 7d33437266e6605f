/**
 * Stats benchmark (issue 26's speed aim: GET /v1/stats for 30 days over a tenant with 1,000,000
 * recorded events, p99 under 50 ms). A gateway process (the compiled bundle, as production runs
 * it; bench/support/services.ts) on the real PostgreSQL, RabbitMQ and Redis; a tenant whose
 * rollups hold BENCH_EVENTS (1,000,000) events spread over the last 30 days, beside
 * BENCH_OTHER_TENANTS tenants with BENCH_OTHER_EVENTS each in the same table; then autocannon
 * against GET /v1/stats (30 days by day, 30 days by day filtered by domain and campaign, 7 days
 * by hour, 30 days by hour) and, in the same rounds, the baselines GET /healthz and
 * GET /v1/email/logs?pageSize=1. One connection (the latency of a request alone: the aim) and
 * BENCH_CONNECTIONS (10) connections (under load). Prints JSON, a copy in bench/results/.
 *
 * Seeding is by SQL equivalent to the write path, not through it (recording a million events
 * through the event writer would also write a million email_events rows and their log rows,
 * which this query never reads): each event is drawn with the counter it moves, its hour in the
 * last 30 days, its mailer (each mailer its own sending domain), its campaign (or none) and the
 * slot of the connection that wrote it (0..STATS_SLOTS-1, uniformly: the worst case, every slot
 * of every bucket in use), and added to its hour row and its day row, as
 * libs/store/src/stats-rollup-sql.ts adds it; `requested` once per delivered, failed or
 * rejected event (its acceptance). Every dimension value in every hour: the most rows a tenant
 * of this volume can have.
 *
 *   pnpm bench:stats
 *   BENCH_EVENTS=200000 BENCH_CAMPAIGNS=50 BENCH_SECONDS=5 pnpm bench:stats
 *   BENCH_SLOTS=1 pnpm bench:stats   # rollups as writers with one slot per bucket leave them
 */
import { loadavg } from 'node:os';
import { closeContext } from '@mailyard/platform';
import { STATS_SLOTS } from '@mailyard/store';
import { freePort } from '@mailyard/testkit/process';
import autocannon from 'autocannon';
import { printAndKeep, runMain, stopProcess } from '../support/proc';
import {
  bootstrapGatewayEnv,
  bootstrapTenantId,
  createBenchServers,
  openHarnessContext,
} from '../support/servers';
import { servicesForm, spawnService } from '../support/services';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 1_000_000);
const MAILERS = Number(process.env.BENCH_MAILERS ?? 4);
const CAMPAIGNS = Number(process.env.BENCH_CAMPAIGNS ?? 10);
const OTHER_TENANTS = Number(process.env.BENCH_OTHER_TENANTS ?? 20);
const OTHER_EVENTS = Number(process.env.BENCH_OTHER_EVENTS ?? 50_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
/** Slots the seed spreads each bucket over (default: the writers' STATS_SLOTS), to compare slot counts. */
const SLOTS = Number(process.env.BENCH_SLOTS ?? STATS_SLOTS);
const KEY = 'myk_bench_stats_bootstrap_key_0123456789abcdefgh';
const DAY = 86_400_000;

/**
 * The rollups of `events` events of tenant `tenant` (see the module comment): a counter by
 * weight (delivered 45 %, opened 25 % of which 60 % first opens, clicked 10 % of which 60 % first
 * clicks, bounced 3 %, failed 3 %, rejected 2 %, unsubscribed 1 %, spam 0.5 %, the rest
 * retry-scheduled SMTP_ERRORs counting nothing), the hour, mailer, campaign and slot uniformly.
 */
const SEED = `
WITH e AS (
  SELECT date_trunc('hour', now() - random() * interval '30 days', 'UTC') AS hour,
         floor(random() * $3)::int AS m, floor(random() * ($4 + 1))::int AS c,
         floor(random() * $5)::smallint AS slot, random() AS r, random() AS u
    FROM generate_series(1, $2::int)
),
k AS (
  SELECT hour, 'mailer_' || m AS mailer_id, 'd' || m || '.example' AS domain,
         CASE WHEN c = 0 THEN '' ELSE 'campaign-' || c END AS campaign_id, slot,
         (r < 0.45)::int AS delivered, (r >= 0.45 AND r < 0.70)::int AS opened,
         (r >= 0.45 AND r < 0.70 AND u < 0.6)::int AS unique_opened,
         (r >= 0.70 AND r < 0.80)::int AS clicked, (r >= 0.70 AND r < 0.80 AND u < 0.6)::int AS unique_clicked,
         (r >= 0.80 AND r < 0.83)::int AS bounced, (r >= 0.83 AND r < 0.86)::int AS failed,
         (r >= 0.86 AND r < 0.88)::int AS rejected, (r >= 0.88 AND r < 0.89)::int AS unsubscribed,
         (r >= 0.89 AND r < 0.895)::int AS spam
    FROM e
)
INSERT INTO stats_rollups (tenant_id, span, bucket, domain, mailer_id, campaign_id, slot, requested, delivered,
                           bounced, spam, opened, unique_opened, clicked, unique_clicked, unsubscribed, failed, rejected)
SELECT $1, p.span, CASE WHEN p.span = 'day' THEN date_trunc('day', hour, 'UTC') ELSE hour END,
       domain, mailer_id, campaign_id, slot,
       sum(delivered + failed + rejected), sum(delivered), sum(bounced), sum(spam), sum(opened), sum(unique_opened),
       sum(clicked), sum(unique_clicked), sum(unsubscribed), sum(failed), sum(rejected)
  FROM k CROSS JOIN (VALUES ('hour'), ('day')) AS p(span)
 GROUP BY 1, 2, 3, 4, 5, 6, 7`;

interface Result {
  requests_per_sec: number;
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
  non_2xx: number;
  errors: number;
}

async function load(url: string, connections: number): Promise<Result> {
  const r = await autocannon({
    url,
    connections,
    duration: SECONDS,
    headers: { authorization: `Bearer ${KEY}` },
  });
  return {
    requests_per_sec: Math.round(r.requests.average),
    p50_ms: r.latency.p50,
    p99_ms: r.latency.p99,
    max_ms: r.latency.max,
    non_2xx: r.non2xx,
    errors: r.errors + r.timeouts,
  };
}

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

async function main(): Promise<void> {
  const servers = await createBenchServers();
  const env = servers.env;
  const ctx = await openHarnessContext(env);
  const port = await freePort();
  const gateway = spawnService('gateway', {
    ...env,
    ...bootstrapGatewayEnv(KEY, port),
    LOG_LEVEL: 'warn',
    NODE_ENV: 'production',
  });
  try {
    await gateway.waitFor(/started/, 240_000);
    const tenantId = await bootstrapTenantId(ctx, KEY);

    const seedStarted = Date.now();
    await ctx.db.query(SEED, [tenantId, EVENTS, MAILERS, CAMPAIGNS, SLOTS]);
    for (let i = 0; i < OTHER_TENANTS; i++) {
      await ctx.db.query(SEED, [`tenant_other_${i}`, OTHER_EVENTS, MAILERS, CAMPAIGNS, SLOTS]);
    }
    await ctx.db.query('VACUUM ANALYZE stats_rollups');
    const rows = await ctx.db.query<{ span: string; n: string; total: string }>(
      `SELECT span, count(*) AS n,
              sum(delivered + opened + clicked + bounced + failed + rejected + unsubscribed + spam) AS total
         FROM stats_rollups WHERE tenant_id = $1 GROUP BY span ORDER BY span`,
      [tenantId],
    );
    const all = await ctx.db.query<{ n: string }>('SELECT count(*) AS n FROM stats_rollups');
    const seedSeconds = (Date.now() - seedStarted) / 1000;

    const base = `http://127.0.0.1:${port}`;
    const now = Date.now();
    const month = `startDate=${day(now - 29 * DAY)}&endDate=${day(now)}`;
    const week = `startDate=${day(now - 6 * DAY)}&endDate=${day(now)}`;
    const urls: Record<string, string> = {
      healthz: `${base}/healthz`,
      logs_page_size_1: `${base}/v1/email/logs?pageSize=1`,
      stats_30_days_by_day: `${base}/v1/stats?${month}`,
      stats_30_days_by_day_filtered: `${base}/v1/stats?${month}&domain=d1.example&campaignId=campaign-3`,
      stats_7_days_by_hour: `${base}/v1/stats?${week}&granularity=hour`,
      stats_30_days_by_hour: `${base}/v1/stats?${month}&granularity=hour`,
    };
    // The answer checked once: 30 buckets, the seeded events all counted.
    const check = (await (
      await fetch(urls.stats_30_days_by_day!, { headers: { authorization: `Bearer ${KEY}` } })
    ).json()) as {
      data: unknown[];
      totals: Record<string, number>;
    };
    const t = check.totals;
    const counted =
      t.delivered! +
      t.opened! +
      t.clicked! +
      t.bounced! +
      t.failed! +
      t.rejected! +
      t.unsubscribed! +
      t.spam!;
    for (const url of Object.values(urls)) await load(url, 2).catch(() => undefined); // warm-up

    const rounds: Array<Record<string, { one: Result; many: Result }>> = [];
    for (let i = 0; i < ROUNDS; i++) {
      const round: Record<string, { one: Result; many: Result }> = {};
      for (const [name, url] of Object.entries(urls))
        round[name] = { one: await load(url, 1), many: await load(url, CONNECTIONS) };
      rounds.push(round);
    }
    const worst = (name: string, which: 'one' | 'many') =>
      Math.max(...rounds.map((r) => r[name]![which].p99_ms));
    printAndKeep('stats', {
      benchmark: 'stats',
      at: new Date().toISOString(),
      machine: { loadavg_at_start_of_load: loadavg() },
      ...servicesForm(),
      stats_slots: { writers: STATS_SLOTS, seeded: SLOTS },
      seed: {
        how: 'SQL equivalent to the write path (see bench/stats/run.ts)',
        tenant_events: EVENTS,
        tenant_rollup_rows: Object.fromEntries(rows.rows.map((r) => [r.span, Number(r.n)])),
        tenant_events_in_rollups: rows.rows.map((r) => Number(r.total)),
        other_tenants: OTHER_TENANTS,
        other_tenant_events: OTHER_EVENTS,
        table_rows: Number(all.rows[0]!.n),
        mailers_and_domains: MAILERS,
        campaigns: CAMPAIGNS,
        seconds: seedSeconds,
      },
      check_30_days: { buckets: check.data.length, events_counted: counted },
      seconds_per_measure: SECONDS,
      connections: { one: 1, many: CONNECTIONS },
      aim: {
        what: 'GET /v1/stats 30 days by day, p99 < 50 ms (one connection)',
        worst_p99_ms: worst('stats_30_days_by_day', 'one'),
        worst_p99_ms_filtered: worst('stats_30_days_by_day_filtered', 'one'),
        baseline_logs_worst_p99_ms: worst('logs_page_size_1', 'one'),
        baseline_healthz_worst_p99_ms: worst('healthz', 'one'),
      },
      rounds,
    });
  } finally {
    await stopProcess(gateway);
    await closeContext(ctx);
    await servers.drop();
  }
}

runMain(main, { exit: true });
