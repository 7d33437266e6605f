/**
 * Transactional outbox against real PostgreSQL and RabbitMQ. The last test restarts the
 * shared broker: run this file serially with other integration tests (jest --runInBand).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { type BusEnvelope, Exchange } from '@mailyard/contracts';
import {
  type TestDatabase,
  type TestVhost,
  createTestDatabase,
  createTestVhost,
  uniqueName,
} from '@mailyard/testkit/servers';
import { type AmqpBusOptions, openAmqpBus } from '../src/bus/amqp';
import { envelope } from '../src/bus/envelope';
import type { Bus, Consumer } from '../src/bus/types';
import { migrate } from '../src/db/migrate';
import { openPostgres } from '../src/db/postgres';
import type { Db } from '../src/db/types';
import { createLogger } from '../src/logger/logger';
import { enqueueOutbox } from '../src/outbox/outbox';
import { OutboxRelay } from '../src/outbox/relay';
import { deferred, waitFor } from './bus.contract';
import { restartBroker } from './rabbit-admin';

const logger = createLogger('outbox-relay-test', process.env.TEST_LOG_LEVEL ?? 'error');

let database: TestDatabase;
let vhost: TestVhost;
let db: Db;
let consumerBus: Bus;
const toClose: { close(): Promise<void> }[] = [];
const consumers: Consumer[] = [];
const children: ChildProcess[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  vhost = createTestVhost();
  db = openPostgres(database.url, 4);
  await migrate(db);
  consumerBus = await openAmqpBus(vhost.url, logger, { publishTimeoutMs: 90_000, reconnectMaxMs: 2_000 });
});

afterAll(async () => {
  for (const child of children)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await Promise.all(consumers.map((c) => c.cancel()));
  for (const c of toClose.reverse()) await c.close();
  await consumerBus?.close();
  await db?.close();
  await database?.drop();
  await vhost?.drop();
});

async function newBus(opts: AmqpBusOptions = {}): Promise<Bus> {
  const bus = await openAmqpBus(vhost.url, logger, opts);
  toClose.push(bus);
  return bus;
}

/** Consumes `<ns>.#` and records every envelope id delivered (duplicates included). */
async function collect(ns: string) {
  const ids: string[] = [];
  const consumer = await consumerBus.consume(
    { queue: `${ns}.q`, bindings: [{ exchange: Exchange.events, routingKey: `${ns}.#` }], prefetch: 64 },
    async (d) => {
      ids.push(d.envelope.id);
    },
  );
  consumers.push(consumer);
  return {
    ids,
    unique: () => new Set(ids),
    hasAll: (expected: string[]) => {
      const seen = new Set(ids);
      return expected.every((id) => seen.has(id));
    },
  };
}

/** Writes `count` outbox rows in one transaction; returns their envelopes. */
async function writeRows(ns: string, count: number): Promise<BusEnvelope[]> {
  const envs = Array.from({ length: count }, (_, i) => envelope('test.outbox', { i }));
  await db.transaction(async (tx) => {
    for (const env of envs) await enqueueOutbox(tx, Exchange.events, `${ns}.row`, env);
  });
  return envs;
}

/**
 * Proves nothing more is on its way, by a positive signal instead of a pause: one more row,
 * published after everything else was (confirmed) into the same queue, has been consumed. Returns
 * its id so callers can leave it out.
 */
async function untilEndRow(ns: string, consumed: { hasAll(ids: string[]): boolean }): Promise<string> {
  const [end] = await writeRows(ns, 1);
  const relay = new OutboxRelay(db, await newBus(), logger, { pollMs: 20, batchSize: 1000 });
  await relay.drainOnce();
  await waitFor(() => consumed.hasAll([end!.id]), 'the end row');
  return end!.id;
}

const pendingCount = async () =>
  (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM outbox WHERE sent_at IS NULL')).rows[0]!.n;

it('publishes only committed rows: a rolled-back row never, an open transaction once it commits', async () => {
  const ns = uniqueName('a');
  const consumed = await collect(ns);
  // Published rows kept (marked sent), so the rows committed can be read back at the end.
  const relay = new OutboxRelay(db, await newBus(), logger, {
    pollMs: 20,
    batchSize: 50,
    retentionMs: 3_600_000,
  });

  const rolledBack = envelope('test.outbox', { rolledBack: true });
  await expect(
    db.transaction(async (tx) => {
      await enqueueOutbox(tx, Exchange.events, `${ns}.row`, rolledBack);
      throw new Error('domain write failed');
    }),
  ).rejects.toThrow('domain write failed');

  const inserted = deferred<number>();
  const commit = deferred();
  const late = envelope('test.outbox', { late: true });
  const open = db.transaction(async (tx) => {
    inserted.resolve(await enqueueOutbox(tx, Exchange.events, `${ns}.row`, late));
    await commit.promise;
  });
  const lateId = await inserted.promise;
  const [marker] = await writeRows(ns, 1);

  // The open transaction's row is invisible to the relay; the committed marker goes out.
  expect(await relay.drainOnce()).toBe(1);
  expect(await relay.drainOnce()).toBe(0);
  commit.resolve();
  await open;
  expect(await relay.drainOnce()).toBe(1);

  await waitFor(() => consumed.hasAll([marker!.id, late.id]), 'marker and late row');
  const end = await untilEndRow(ns, consumed);
  expect(consumed.ids.filter((id) => id !== end).sort()).toEqual([marker!.id, late.id].sort());
  expect(consumed.ids).not.toContain(rolledBack.id);
  const rows = await db.query<{ id: number; sent: boolean }>(
    "SELECT id, sent_at IS NOT NULL AS sent FROM outbox WHERE message->>'id' = ANY($1::text[])",
    [[rolledBack.id, late.id, marker!.id]],
  );
  expect(rows.rows).toHaveLength(2);
  expect(rows.rows.every((r) => r.sent)).toBe(true);
  expect(rows.rows.map((r) => r.id)).toContain(lateId);
});

it('two relays on one table publish every row exactly once between them', async () => {
  const ns = uniqueName('b');
  const consumed = await collect(ns);
  const envs = await writeRows(ns, 1000);
  const counts = [0, 0];
  const relays = await Promise.all(
    [0, 1].map(async (i) => {
      const ownDb = openPostgres(database.url, 2);
      toClose.push(ownDb);
      const bus = await newBus();
      const counting: Bus = {
        kind: bus.kind,
        publish: async (exchange, key, env) => {
          await bus.publish(exchange, key, env);
          counts[i]!++;
        },
        publishDelayed: (q, env, ms) => bus.publishDelayed(q, env, ms),
        consume: (o, h) => bus.consume(o, h),
        subscribe: (o, h) => bus.subscribe(o, h),
        parked: (q, d) => bus.parked(q, d),
        check: () => bus.check(),
        close: () => bus.close(),
      };
      return new OutboxRelay(ownDb, counting, logger, { pollMs: 20, batchSize: 25 });
    }),
  );
  for (const r of relays) r.start();
  await waitFor(() => consumed.hasAll(envs.map((e) => e.id)), 'all 1000 rows');
  await Promise.all(relays.map((r) => r.stop()));

  expect(await pendingCount()).toBe(0);
  expect(counts[0]! + counts[1]!).toBe(1000);
  expect(counts[0]).toBeGreaterThan(0);
  expect(counts[1]).toBeGreaterThan(0);
  await untilEndRow(ns, consumed);
  expect(consumed.ids).toHaveLength(1001);
});

it('loses nothing when a relay process is killed with SIGKILL mid-batch', async () => {
  const ns = uniqueName('c');
  const consumed = await collect(ns);
  const envs = await writeRows(ns, 2000);

  const child = spawn(
    process.execPath,
    ['--require', require.resolve('tsx/cjs'), join(__dirname, 'fixtures', 'outbox-relay-child.ts')],
    {
      cwd: join(__dirname, '..', '..', '..'),
      env: {
        ...process.env,
        DATABASE_URL: database.url,
        AMQP_URL: vhost.url,
        BATCH_SIZE: '100',
        PUBLISH_JITTER_MS: '40',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  children.push(child);
  let stderr = '';
  child.stderr!.on('data', (chunk) => {
    stderr += String(chunk);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk) => {
      if (String(chunk).includes('ready')) resolve();
    });
    child.once('exit', (code) =>
      reject(new Error(`relay child exited (${code}) before it was ready: ${stderr}`)),
    );
  });

  await waitFor(() => consumed.ids.length >= 650, 'the child to publish 650 rows', 60_000);
  child.kill('SIGKILL');
  await exited;
  expect(child.signalCode).toBe('SIGKILL');
  const pendingAfterKill = await pendingCount();
  expect(pendingAfterKill).toBeGreaterThan(0);

  const relay = new OutboxRelay(db, await newBus(), logger, { pollMs: 20, batchSize: 100 });
  relay.start();
  await waitFor(() => consumed.hasAll(envs.map((e) => e.id)), 'all 2000 rows', 60_000);
  await relay.stop();
  expect(await pendingCount()).toBe(0);
  await untilEndRow(ns, consumed); // trailing duplicates, if any, have arrived

  const duplicates = consumed.ids.length - consumed.unique().size;
  console.log(
    `outbox kill test: 2000 rows, ${pendingAfterKill} pending after SIGKILL, ${consumed.ids.length} deliveries, ${duplicates} duplicates`,
  );
  expect(consumed.unique().size).toBe(2001);
}, 120_000);

it('resumes after a broker restart while rows are pending; failed batches stay pending', async () => {
  const ns = uniqueName('d');
  const consumed = await collect(ns);
  const before = await writeRows(ns, 500);
  // A short publish wait makes batches fail (and roll back) while the broker is down; the
  // failed batches are counted.
  let failedBatches = 0;
  const counting: Db = {
    ...db,
    transaction: (fn) =>
      db.transaction(fn).catch((err: unknown) => {
        failedBatches++;
        throw err;
      }),
  };
  const relay = new OutboxRelay(
    counting,
    await newBus({ publishTimeoutMs: 500, reconnectMaxMs: 1_000 }),
    logger,
    {
      pollMs: 20,
      batchSize: 50,
      maxBackoffMs: 500,
    },
  );
  relay.start();
  await waitFor(() => consumed.ids.length >= 50, 'the first rows');

  let during: BusEnvelope[] = [];
  await restartBroker(async () => {
    during = await writeRows(ns, 500);
    // Two batches taken after these rows were written failed and rolled back: all still pending.
    const failed = failedBatches;
    await waitFor(() => failedBatches >= failed + 2, 'two failed batches while the broker is down', 30_000);
    expect(await pendingCount()).toBeGreaterThanOrEqual(500);
  });

  const all = [...before, ...during].map((e) => e.id);
  await waitFor(() => consumed.hasAll(all), 'all 1000 rows after the restart', 90_000);
  await relay.stop();
  expect(await pendingCount()).toBe(0);
  expect(consumed.unique().size).toBe(1000);
}, 180_000);
