/**
 * The gateway's own per-request cost, without the network and without a database: requests are
 * handed to the express app in this process (a real IncomingMessage and ServerResponse over a
 * socket that discards what is written), against a stand-in database that answers the key lookup
 * and the template read from memory, and the in-process kv. What is left is the middleware chain,
 * routing, validation and JSON serialisation: the part of a request the gateway's code decides.
 * Each scenario runs BENCH_REQUESTS (20000) requests, BENCH_CONCURRENCY (50) at a time, after a
 * warm-up, BENCH_REPEATS (5) times; it reports the lowest user+system CPU per request (the run
 * least disturbed by the rest of the machine) for the gateway's routes and for a bare express
 * hello-world in the same harness, and their ratio.
 *
 * With BENCH_STORES=servers the gateway uses the real PostgreSQL and Redis instead (own database,
 * own key prefix; `postgres` or `redis` for one of them): the difference to the default run is
 * what the database and kv clients cost the gateway process per request (their encoding, parsing
 * and system calls).
 *
 *   pnpm bench:gateway-chain
 *   BENCH_STORES=servers pnpm bench:gateway-chain
 */
import { IncomingMessage, ServerResponse } from 'node:http';
import { Duplex } from 'node:stream';
import { buildGatewayApp } from '@mailyard/gateway/src/app';
import { apiKeyAuth } from '@mailyard/gateway/src/auth/api-key-auth';
import { KeyCache } from '@mailyard/gateway/src/auth/key-cache';
import { rateLimit } from '@mailyard/gateway/src/rate-limit/rate-limit';
import { sendHandler } from '@mailyard/gateway/src/send/routes';
import { gatewayConfig } from '@mailyard/gateway/src/settings';
import type { Db, Kv, Queryable, Row } from '@mailyard/platform';
import {
  Sealer,
  createLogger,
  createMemoryBus,
  createMemoryKv,
  loadConfig,
  migrate,
  openDatabase,
  openKv,
  parseByteSize,
} from '@mailyard/platform';
import { ensureBootstrapTenant, templates } from '@mailyard/store';
import { REDIS_URL, createTestDatabase, testRedisPrefix } from '@mailyard/testkit/servers';
import express, { type Express } from 'express';
import { singleBody } from '../send/pipeline';
import { sendSteps } from './send-steps';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 20_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 50);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 5);
/** `stand-in` (default), `servers` (PostgreSQL and Redis), `postgres` or `redis` (one of them). */
const STORES = process.env.BENCH_STORES ?? 'stand-in';
const KEY = 'myk_bench_chain_key_0123456789abcdefghijklmnop';
let templateId = 'tmpl_01JBENCHCHAIN0000000000000';

/** A socket that accepts and drops every write. */
class NullSocket extends Duplex {
  remoteAddress = '127.0.0.1';
  override _read(): void {}
  override _write(_chunk: unknown, _enc: BufferEncoding, cb: () => void): void {
    cb();
  }
  override _writev(_chunks: unknown, cb: () => void): void {
    cb();
  }
  setTimeout(): this {
    return this;
  }
  setNoDelay(): this {
    return this;
  }
}

/** Answers the two statements a template read needs; anything else is an error. */
function standInDb(): Db {
  const query = async <T = Row>(
    sql: string,
    params?: unknown[],
  ): Promise<{ rows: T[]; rowCount: number }> => {
    if (sql.includes('FROM api_keys k JOIN tenants'))
      return {
        rows: [{ tenantId: 'tenant_bench', tier: 'enterprise', keyId: 'key_bench' }] as T[],
        rowCount: 1,
      };
    if (sql.startsWith('SELECT id, name, subject, content, created_at, updated_at FROM templates')) {
      const now = new Date();
      const row = {
        id: templateId,
        name: 'Bench',
        subject: 'Hello {{name}}',
        content: [{ type: 'text/html', value: '<p>Hello {{name}}, this is a benchmark template.</p>' }],
        created_at: now,
        updated_at: now,
      };
      return { rows: [row] as T[], rowCount: 1 };
    }
    if (sql.startsWith('INSERT INTO templates')) return { rows: [], rowCount: 1 };
    // The send route's two statements (group commit): the accept contexts and the batch insert.
    if (sql.includes('LEFT JOIN mailers m ON')) {
      const keys = (params?.[0] as string[] | undefined) ?? [];
      const rows = keys.map((_, i) => ({
        k: i + 1,
        config_type: 'domain',
        state: 'active',
        deleted: false,
        domain: 'bench.test',
        verified: true,
        template_id: null,
      }));
      return { rows: rows as T[], rowCount: rows.length };
    }
    if (sql.includes('INSERT INTO sends')) return { rows: [], rowCount: 1 };
    throw new Error(`bench stand-in database has no answer for: ${sql}`);
  };
  const tx: Queryable = { query };
  return {
    kind: 'postgres',
    query,
    transaction: (fn) => fn(tx),
    check: async () => {},
    close: async () => {},
  };
}

function send(app: Express, method: string, url: string, headers: Record<string, string>, body?: string) {
  return new Promise<number>((resolve, reject) => {
    const socket = new NullSocket();
    const req = new IncomingMessage(socket as never);
    req.method = method;
    req.url = url;
    req.headers = body ? { ...headers, 'content-length': String(Buffer.byteLength(body)) } : headers;
    // As the HTTP parser leaves a fully received request (else its end would destroy the socket).
    req.complete = true;
    if (body) req.push(body);
    req.push(null);
    const res = new ServerResponse(req);
    res.assignSocket(socket as never);
    res.on('finish', () => resolve(res.statusCode));
    res.on('error', reject);
    app(req as never, res as never);
  });
}

async function run(
  app: Express,
  method: string,
  url: string,
  headers: Record<string, string>,
  body?: string,
) {
  let next = 0;
  let bad = 0;
  const worker = async () => {
    while (next++ < REQUESTS) if ((await send(app, method, url, headers, body)) >= 300) bad++;
  };
  const cpu0 = process.cpuUsage();
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const cpu = process.cpuUsage(cpu0);
  if (bad) throw new Error(`${bad} of ${REQUESTS} requests to ${method} ${url} failed`);
  return (cpu.user + cpu.system) / REQUESTS;
}

async function scenario(
  app: Express,
  method: string,
  url: string,
  headers: Record<string, string>,
  body?: string,
) {
  await run(app, method, url, headers, body); // warm-up
  const runs: number[] = [];
  for (let i = 0; i < REPEATS; i++) runs.push(await run(app, method, url, headers, body));
  return { cpu_us_per_request: Number(Math.min(...runs).toFixed(1)), runs: runs.map((r) => Math.round(r)) };
}

async function main(): Promise<void> {
  const config = loadConfig({
    ...process.env,
    DATA_DIR: 'memory://',
    DATABASE_URL: '',
    AMQP_URL: '',
    REDIS_URL: '',
    LOG_LEVEL: 'warn',
    NODE_ENV: 'production',
    RATE_LIMIT_ENTERPRISE: '1000000000',
  });
  const logger = createLogger('bench', 'warn');
  let db = standInDb();
  let kv: Kv = createMemoryKv();
  let dropDatabase = async () => {};
  if (STORES === 'servers' || STORES === 'postgres') {
    const testDb = await createTestDatabase();
    dropDatabase = testDb.drop;
    db = await openDatabase({ DATABASE_URL: testDb.url, DATA_DIR: '', DB_POOL_SIZE: 10 });
    await migrate(db);
    const { tenantId } = await ensureBootstrapTenant(db, KEY, 'enterprise');
    templateId = await templates.create(db, tenantId, {
      name: 'Bench',
      subject: 'Hello {{name}}',
      content: [{ type: 'text/html', value: '<p>Hello {{name}}, this is a benchmark template.</p>' }],
    });
  }
  if (STORES === 'servers' || STORES === 'redis') {
    kv = await openKv({ REDIS_URL, REDIS_KEY_PREFIX: testRedisPrefix() });
    for (let i = 0; ; i++) {
      try {
        await kv.check();
        break;
      } catch (err) {
        if (i > 100) throw err;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }
  const bus = createMemoryBus(logger);
  const gateway = buildGatewayApp({ config, logger, db, bus, kv, sealer: new Sealer(Buffer.alloc(32, 7)) });
  const bare = express();
  bare.get('/hello', (_req, res) => {
    res.json({ success: true, hello: 'world' });
  });

  const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json', host: 'bench' };
  const body = JSON.stringify({
    name: 'Bench',
    subject: 'Hello {{name}}',
    content: [{ type: 'text/html', value: '<p>Hello {{name}}, this is a benchmark template.</p>' }],
  });
  // POST /v1/email/send with the send benchmark's single-recipient body (bench/send/pipeline.ts).
  const sendBody = singleBody('mlr_01JBENCHCHAIN000000000000', 1);
  const only = process.env.BENCH_ONLY; // one scenario (bare, get, post, send, steps), e.g. for a --cpu-prof run
  if (only === 'steps') {
    const settings = gatewayConfig(config);
    // The send route's steps one by one (send-steps.ts), with instances built as app.ts builds them.
    const steps = await sendSteps({
      socket: () => new NullSocket(),
      headers,
      body: sendBody,
      limits: { limit: parseByteSize(settings.HTTP_SEND_BODY_LIMIT), maxDepth: 32, maxValues: 100_000 },
      guards: [
        apiKeyAuth(db, new KeyCache(settings.API_KEY_CACHE_MS)),
        rateLimit(kv, logger, {
          limits: { standard: settings.RATE_LIMIT_STANDARD, enterprise: settings.RATE_LIMIT_ENTERPRISE },
          windowMs: settings.RATE_LIMIT_WINDOW_SECONDS * 1000,
        }),
      ],
      handler: sendHandler({ db, sealer: new Sealer(Buffer.alloc(32, 7)) }),
    });
    process.stdout.write(
      `${JSON.stringify({ benchmark: 'gateway-chain steps', cpu_us_per_call: steps }, null, 2)}\n`,
    );
    await bus.close();
    await kv.close();
    await db.close();
    await dropDatabase();
    return;
  }
  const skipped = { cpu_us_per_request: Number.NaN, runs: [] as number[] };
  const bareResult =
    !only || only === 'bare' ? await scenario(bare, 'GET', '/hello', { host: 'bench' }) : skipped;
  const getResult =
    !only || only === 'get'
      ? await scenario(gateway, 'GET', `/v1/email/template/${templateId}`, headers)
      : skipped;
  const postResult =
    !only || only === 'post' ? await scenario(gateway, 'POST', '/v1/email/template', headers, body) : skipped;
  // The send route with the stand-in stores only (its insert would need a verified mailer row).
  const sendResult =
    (!only || only === 'send') && STORES === 'stand-in'
      ? await scenario(gateway, 'POST', '/v1/email/send', headers, sendBody)
      : skipped;
  const ratio = (r: { cpu_us_per_request: number }) =>
    Number((bareResult.cpu_us_per_request / r.cpu_us_per_request).toFixed(3));
  process.stdout.write(
    `${JSON.stringify(
      {
        benchmark: 'gateway-chain',
        at: new Date().toISOString(),
        stores: STORES,
        requests: REQUESTS,
        concurrency: CONCURRENCY,
        bare_express: bareResult,
        get_template: { ...getResult, cpu_ratio_to_bare: ratio(getResult) },
        post_template: { ...postResult, cpu_ratio_to_bare: ratio(postResult) },
        post_send: { ...sendResult, cpu_ratio_to_bare: ratio(sendResult) },
      },
      null,
      2,
    )}\n`,
  );
  await bus.close();
  await kv.close();
  await db.close();
  await dropDatabase();
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exit(1);
});
