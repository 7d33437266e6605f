/**
 * The processes of the send benchmark: send services and a gateway, each its own node process
 * on the real PostgreSQL, RabbitMQ and Redis (one database and vhost for the run), optionally
 * with `--cpu-prof` writing a profile per process into a directory of its own; the request
 * bodies; delivery counting (email_logs, and each send service's own MAIL_DELIVERED counter).
 */
import { join } from 'node:path';
import { type Spawned, freePort } from '@mailyard/testkit/process';
import pg from 'pg';
import { stopProcess } from '../support/proc';
import { bootstrapGatewayEnv } from '../support/servers';
import { type ServiceName, spawnService as spawnServiceProcess } from '../support/services';

export const DOMAIN = 'bench.test';
export const BENCH_APP = 'mailyard-bench';

export interface Service {
  label: string;
  proc: Spawned;
  /** Where its /metrics is served: its ops port (see spawnService for older checkouts). */
  metricsUrl: string;
  profileDir: string | null;
}

/**
 * Spawns service `name` (in the form ../support/services chooses) with a free ops port; with
 * `profileRoot`, node writes a CPU profile there at exit. A gateway of a checkout from before
 * every process had an ops port (its banner names none) served /metrics on `apiPort`.
 */
export async function spawnService(
  label: string,
  name: ServiceName,
  env: Record<string, string>,
  profileRoot: string | null,
  ready: RegExp,
  apiPort?: number,
): Promise<Service> {
  const opsPort = await freePort();
  const profileDir = profileRoot ? join(profileRoot, label) : null;
  const nodeArgs = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  const proc = spawnServiceProcess(name, { ...env, OPS_PORT: String(opsPort) }, nodeArgs);
  await proc.waitFor(ready, 60_000);
  const port = apiPort === undefined || proc.output().includes(`:${opsPort}/healthz`) ? opsPort : apiPort;
  return { label, proc, metricsUrl: `http://127.0.0.1:${port}/metrics`, profileDir };
}

/**
 * The gateway on a free API port with `key` as the bootstrap key of an unthrottled enterprise
 * tenant (bootstrapGatewayEnv): `env` under those settings, `extra` over them; started.
 */
export async function spawnBootstrapGateway(
  env: Record<string, string>,
  key: string,
  extra: Record<string, string>,
  profileRoot: string | null,
): Promise<{ gateway: Service; port: number }> {
  const port = await freePort();
  const gateway = await spawnService(
    'gateway',
    'gateway',
    { ...env, ...bootstrapGatewayEnv(key, port), ...extra },
    profileRoot,
    /Mailyard gateway started/,
    port,
  );
  return { gateway, port };
}

export async function stopService(s: Service): Promise<void> {
  await stopProcess(s.proc);
}

/** Counters a process reports on /metrics (0 when absent). */
export async function countersOf(
  s: Service,
): Promise<{ delivered: number; statements: number; transactions: number }> {
  const text = await (await fetch(s.metricsUrl)).text();
  const value = (re: RegExp) => Number(re.exec(text)?.[1] ?? 0);
  return {
    delivered: value(/^mailyard_send_events_total\{event="MAIL_DELIVERED"\} (\d+)/m),
    statements: value(/^mailyard_db_statements_total (\d+)/m),
    transactions: value(/^mailyard_db_transactions_total (\d+)/m),
  };
}

const PARAGRAPH = 'Here is what happened this week. '.repeat(20);

const content = [
  {
    type: 'text/html',
    value: `<html><body><h1>Hello {{name}}</h1><p>${PARAGRAPH}</p><p><a href="https://${DOMAIN}/digest">Read more</a></p></body></html>`,
  },
  { type: 'text/plain', value: `Hello {{name}}\n\n${PARAGRAPH}\nhttps://${DOMAIN}/digest` },
];

/** One single-recipient send (HTML + text, a substitution, custom_args). */
export function singleBody(mailerId: string, i: number): string {
  return JSON.stringify({
    from: { email: `news@${DOMAIN}`, name: 'Bench News' },
    to: [{ email: `user${i}@example.com`, name: `User ${i}` }],
    mailer_id: mailerId,
    subject: 'Your weekly digest, {{name}}',
    content,
    substitutions: { [`user${i}@example.com`]: { name: `User ${i}` } },
    custom_args: { bench: true, i },
  });
}

/** One batch send: `n` `to` recipients, each with its own substitutions (a copy per recipient). */
export function batchBody(mailerId: string, i: number, n: number): string {
  const to = Array.from({ length: n }, (_, j) => ({
    email: `b${i}.${j}@example.com`,
    name: `Reader ${i}.${j}`,
  }));
  return JSON.stringify({
    from: { email: `news@${DOMAIN}`, name: 'Bench News' },
    to,
    mailer_id: mailerId,
    subject: 'Your weekly digest, {{name}}',
    content,
    substitutions: Object.fromEntries(to.map((r) => [r.email, { name: r.name }])),
    custom_args: { bench: true, batch: i },
  });
}

/** The benchmark's own database client (named, so its backend is not counted as the pipeline's). */
export async function benchClient(url: string): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: url, application_name: BENCH_APP });
  await c.connect();
  return c;
}

export async function countDelivered(c: pg.Client, tenantId: string): Promise<number> {
  const { rows } = await c.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM email_logs WHERE tenant_id = $1 AND status = 'MAIL_DELIVERED'`,
    [tenantId],
  );
  return rows[0]!.n;
}

/**
 * Polls until `target` log rows read MAIL_DELIVERED; returns Date.now() at that moment. The count
 * reads every log row of the tenant (a sequential scan: it was most of the run's scans of
 * email_logs), so it is not repeated every 25 ms all phase long: the wait before the next count
 * is half the time the rate seen so far needs for what is missing (25 ms to 1 s), so the count
 * runs a few dozen times per phase and still ends within 25 ms of the last delivery.
 */
export async function waitDelivered(
  c: pg.Client,
  tenantId: string,
  target: number,
  timeoutMs: number,
): Promise<number> {
  const t0 = Date.now();
  const deadline = t0 + timeoutMs;
  const d0 = await countDelivered(c, tenantId);
  let d = d0;
  for (;;) {
    if (d >= target) return Date.now();
    if (Date.now() > deadline)
      throw new Error(`only ${d} of ${target} emails delivered within ${timeoutMs} ms`);
    const perMs = (d - d0) / Math.max(1, Date.now() - t0);
    const wait = perMs > 0 ? Math.min(1000, Math.max(25, (target - d) / perMs / 2)) : 25;
    await new Promise((r) => setTimeout(r, wait));
    d = await countDelivered(c, tenantId);
  }
}

/** PostgreSQL backends serving database `name`, the benchmark's own excepted. */
export async function pipelineBackends(c: pg.Client, name: string): Promise<number[]> {
  const { rows } = await c.query<{ pid: number }>(
    'SELECT pid FROM pg_stat_activity WHERE datname = $1 AND application_name <> $2',
    [name, BENCH_APP],
  );
  return rows.map((r) => r.pid);
}
