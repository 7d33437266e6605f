/** The outbox on the embedded defaults: PGlite (in memory) and the in-process bus. */
import { type BusEnvelope, Exchange, type ExchangeName } from '@mailyard/contracts';
import { envelope } from '../src/bus/envelope';
import { createMemoryBus } from '../src/bus/memory';
import type { Bus } from '../src/bus/types';
import { loadConfig } from '../src/config/env';
import { openDatabase } from '../src/db';
import { migrate } from '../src/db/migrate';
import type { Db } from '../src/db/types';
import { createLogger } from '../src/logger/logger';
import { enqueueOutbox } from '../src/outbox/outbox';
import { OutboxRelay } from '../src/outbox/relay';
import { startOutboxRelay } from '../src/outbox/start-relay';
import { waitFor } from './bus.contract';
import { captureLogger } from './capture-logger';

const logger = createLogger('outbox-pglite-test', process.env.TEST_LOG_LEVEL ?? 'error');

let db: Db;
let bus: Bus;
let received: BusEnvelope[];

beforeAll(async () => {
  db = await openDatabase({ DATABASE_URL: undefined, DATA_DIR: 'memory://', DB_POOL_SIZE: 1 });
  expect(db.kind).toBe('pglite');
  await migrate(db);
  bus = createMemoryBus(logger);
  await bus.consume(
    { queue: 'outbox-test', bindings: [{ exchange: Exchange.events, routingKey: 'ob.#' }] },
    async (d) => {
      received.push(d.envelope);
    },
  );
});

beforeEach(async () => {
  received = [];
  await db.query('DELETE FROM outbox');
});

afterAll(async () => {
  await bus?.close();
  await db?.close();
});

const rowsOf = async () =>
  (
    await db.query<{ id: number; sent: boolean }>(
      'SELECT id, sent_at IS NOT NULL AS sent FROM outbox ORDER BY id',
    )
  ).rows;

// Both ways of settling a published row: deleted at once (OUTBOX_RETENTION_MS=0) or marked sent and kept.
describe.each([
  ['deleted on publish', 0],
  ['kept for a retention', 3_600_000],
])('published rows %s', (_how, retentionMs) => {
  /** Each row: `pending`, or `done` (deleted, or marked sent when kept); a kept row must be marked. */
  const statesOf = async (ids: number[]) => {
    const sent = new Map((await rowsOf()).map((r) => [Number(r.id), r.sent]));
    return ids.map((id) => {
      const s = sent.get(Number(id));
      if (s === undefined) return retentionMs === 0 ? 'done' : 'missing';
      return s ? (retentionMs === 0 ? 'kept' : 'done') : 'pending';
    });
  };

  it('publishes committed rows in batches, never rolled-back ones, and settles them', async () => {
    const relay = new OutboxRelay(db, bus, logger, { pollMs: 10, batchSize: 2, retentionMs });
    const committed = [envelope('t', { n: 1 }), envelope('t', { n: 2 }), envelope('t', { n: 3 })];
    const ids = await db.transaction(async (tx) => {
      const out: number[] = [];
      for (const env of committed) out.push(await enqueueOutbox(tx, Exchange.events, 'ob.created', env));
      return out;
    });
    expect(ids.every((id) => Number.isInteger(id))).toBe(true);
    const rolledBack = envelope('t', { n: 4 });
    await expect(
      db.transaction(async (tx) => {
        await enqueueOutbox(tx, Exchange.events, 'ob.created', rolledBack);
        throw new Error('rollback');
      }),
    ).rejects.toThrow('rollback');

    expect(await relay.drainOnce()).toBe(2);
    expect(await relay.drainOnce()).toBe(1);
    expect(await relay.drainOnce()).toBe(0);
    await waitFor(() => received.length === 3, 'three messages');
    expect(received.map((e) => e.id).sort()).toEqual(committed.map((e) => e.id).sort());
    expect(received[0]).toEqual(JSON.parse(JSON.stringify(committed.find((e) => e.id === received[0]!.id))));
    expect(await statesOf(ids)).toEqual(['done', 'done', 'done']);
  });

  it('keeps rows whose publish failed pending, settles the confirmed ones, and throws', async () => {
    let failing = true;
    const flaky: Bus = {
      ...bus,
      kind: 'memory',
      publish: async (exchange: ExchangeName, key: string, env: BusEnvelope) => {
        if (failing && key === 'ob.flaky') throw new Error('broker unavailable');
        await bus.publish(exchange, key, env);
      },
    };
    const relay = new OutboxRelay(db, flaky, logger, { pollMs: 10, batchSize: 10, retentionMs });
    const ids = [
      await enqueueOutbox(db, Exchange.events, 'ob.ok', envelope('t', { n: 1 })),
      await enqueueOutbox(db, Exchange.events, 'ob.flaky', envelope('t', { n: 2 })),
      await enqueueOutbox(db, Exchange.events, 'ob.ok', envelope('t', { n: 3 })),
    ];

    await expect(relay.drainOnce()).rejects.toThrow(
      'outbox relay: 1 of 3 messages not published: broker unavailable',
    );
    expect(await statesOf(ids)).toEqual(['done', 'pending', 'done']);
    failing = false;
    expect(await relay.drainOnce()).toBe(1);
    expect(await statesOf(ids)).toEqual(['done', 'done', 'done']);
    await waitFor(() => received.length === 3, 'three messages');
  });

  it('drops (and logs) a row that can never be published instead of stalling the outbox', async () => {
    const logged: Record<string, unknown>[] = [];
    const capture = captureLogger((line) => logged.push(JSON.parse(line)), 'info');
    const relay = new OutboxRelay(db, bus, capture, { pollMs: 10, batchSize: 10, retentionMs });
    const bad = await db.query<{ id: number }>(
      "INSERT INTO outbox (exchange, routing_key, message) VALUES ('no.such.exchange', 'ob.x', '{}'::jsonb) RETURNING id",
    );
    const ok = await enqueueOutbox(db, Exchange.events, 'ob.ok', envelope('t', { n: 1 }));
    expect(await relay.drainOnce()).toBe(2);
    expect(await statesOf([bad.rows[0]!.id, ok])).toEqual(['done', 'done']);
    await waitFor(() => received.length === 1, 'the valid message');
    expect(logged).toContainEqual(
      expect.objectContaining({
        level: 'error',
        message: 'outbox row cannot be published; dropped',
        outbox_id: bad.rows[0]!.id,
        exchange: 'no.such.exchange',
      }),
    );
  });
});

it('start() polls, notify() wakes it early, stop() returns while it is idle', async () => {
  let polls = 0;
  let pollsDone = 0;
  const counting: Db = {
    ...db,
    transaction: (fn) => {
      polls++;
      return db.transaction(fn).finally(() => {
        pollsDone++;
      });
    },
  };
  // A poll interval far beyond the test timeout: only notify() can explain a second poll.
  const relay = new OutboxRelay(counting, bus, logger, {
    pollMs: 600_000,
    batchSize: 10,
    cleanupEveryMs: 600_000,
  });
  relay.start();
  // The first (empty) poll has finished: the relay is idle until notified.
  await waitFor(() => pollsDone === 1, 'the first (empty) poll to finish');
  await enqueueOutbox(db, Exchange.events, 'ob.notified', envelope('t', { n: 1 }));
  expect(polls).toBe(1);
  relay.notify();
  await waitFor(() => received.length === 1, 'the notified row');
  expect(polls).toBe(2);
  await relay.stop();
  // Published and deleted in one transaction: no retention unless one is asked for.
  expect(await rowsOf()).toEqual([]);
});

it('cleanup() deletes rows sent more than the retention ago, nothing else', async () => {
  const relay = new OutboxRelay(db, bus, logger, { pollMs: 10, batchSize: 10, retentionMs: 3_600_000 });
  const insert = (sentAt: string | null) =>
    db.query(
      `INSERT INTO outbox (exchange, routing_key, message, sent_at) VALUES ($1, 'ob.c', '{}'::jsonb, ${sentAt ?? 'NULL'}) RETURNING id`,
      [Exchange.events],
    );
  await insert("now() - interval '2 hours'");
  await insert("now() - interval '61 minutes'");
  const recent = (await insert("now() - interval '10 minutes'")).rows[0] as { id: number };
  const pending = (await insert(null)).rows[0] as { id: number };
  expect(await relay.cleanup()).toBe(2);
  expect((await rowsOf()).map((r) => r.id)).toEqual([recent.id, pending.id]);
});

it("startOutboxRelay(ctx) runs a relay with the context's OUTBOX_* settings", async () => {
  const config = loadConfig({ OUTBOX_POLL_MS: '10', OUTBOX_BATCH: '1', OUTBOX_RETENTION_MS: '3600000' });
  const ids = await db.transaction(async (tx) =>
    Promise.all([1, 2].map((n) => enqueueOutbox(tx, Exchange.events, 'ob.started', envelope('t', { n })))),
  );
  const relay = startOutboxRelay({ config, db, bus, logger });
  try {
    await waitFor(() => received.length === 2, 'both rows, polled without a notify');
    // OUTBOX_RETENTION_MS kept them, marked sent.
    expect(await rowsOf()).toEqual(ids.map((id) => ({ id, sent: true })));
  } finally {
    await relay.stop();
  }
});

it('rejects bad options', () => {
  expect(() => new OutboxRelay(db, bus, logger, { pollMs: 10, batchSize: 0 })).toThrow(
    /batchSize must be a positive integer/,
  );
  expect(() => new OutboxRelay(db, bus, logger, { pollMs: 0, batchSize: 1 })).toThrow(
    /pollMs must be at least 1/,
  );
  expect(() => new OutboxRelay(db, bus, logger, { pollMs: 10, batchSize: 1, retentionMs: -1 })).toThrow(
    /retentionMs must be 0 or more/,
  );
});
