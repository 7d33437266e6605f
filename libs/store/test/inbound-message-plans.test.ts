/**
 * How the MX service's per-message statements read inbound_messages on real PostgreSQL, on a table
 * of realistic shape (many processed messages whose old versions are still in the partial index
 * inbound_messages_stored_idx, as between two VACUUMs, and a few stored ones), both before the
 * table has statistics (a new installation, and every `pnpm bench:inbound` run) and analysed:
 * - marking messages processed (completeBatch, complete with effects) probes the primary key per
 *   id and never reads inbound_messages_stored_idx: that index holds an entry for every message
 *   processed since the last VACUUM, and a bitmap scan of it (chosen for `id = ANY(...) AND
 *   status = 'stored'`) read them all for every completion (issue 10 sixth pass,
 *   bench/history/33-2026-11-26-inbound-what-read-inbound-messages-per-message-the-in.md);
 * - the recovery sweep (storedBefore) reads the stored messages through that partial index, no
 *   sequential scan of the table;
 * - and the marks keep their meaning: only messages still `stored` are marked, once.
 */
import type { Db, Queryable } from '@mailyard/platform';
import { useMigratedDatabase } from '@mailyard/testkit/migrated-database';
import { type PlanNode, explaining as explainingAll } from '@mailyard/testkit/query-plans';
import { inboundMessages } from '../src';

const database = useMigratedDatabase();
let db: Db;

const PROCESSED = 20_000;
const STORED = 1000;

beforeAll(async () => {
  db = database.db();
  // statistics only when a test takes them (ANALYZE below), not when autovacuum happens to run
  await db.query('ALTER TABLE inbound_messages SET (autovacuum_enabled = false)');
  await db.query(
    `INSERT INTO inbound_messages (id, received_at, remote_ip, helo, mail_from, recipients, raw, size)
     SELECT 'inmsg_plan' || lpad(g::text, 6, '0'), now() - make_interval(secs => ($1::int + $2::int - g) * 0.01),
            '192.0.2.1', 'client.example.org', 'a@example.org', '[{"address":"x@example.com"}]',
            convert_to(repeat('body line ' || g || E'\\r\\n', 150), 'UTF8'), 2048
       FROM generate_series(1, $1::int + $2::int) g`,
    [PROCESSED, STORED],
  );
  // processed as the service does it: an update per message, its old version left in the index
  await db.query(
    `UPDATE inbound_messages SET status = 'processed', processed_at = now()
      WHERE id <= 'inmsg_plan' || lpad($1::text, 6, '0')`,
    [PROCESSED],
  );
});

const explaining = (q: Queryable, plans: PlanNode[][]) => explainingAll(q, /inbound_messages/, plans);

/** The scans of inbound_messages in a plan: the index's name, else the node type (Seq Scan, Tid Scan...). */
const readsOfMessages = (plan: PlanNode[]) =>
  plan
    .filter((n) => n['Node Type'].endsWith('Scan'))
    .filter(
      (n) => n['Relation Name'] === 'inbound_messages' || n['Index Name']?.startsWith('inbound_messages'),
    )
    .map((n) => n['Index Name'] ?? n['Node Type']);

/** Rows found through the primary key; neither the partial index nor the whole table read. */
const expectPrimaryKeyOnly = (reads: string[]) => {
  expect(reads).toContain('inbound_messages_pkey');
  expect(reads).not.toContain('inbound_messages_stored_idx');
  expect(reads).not.toContain('Seq Scan');
};

let next = PROCESSED + 1;
/** `n` stored messages not marked by an earlier test, and `n` processed ones. */
const takeIds = (n: number) => {
  const id = (g: number) => `inmsg_plan${String(g).padStart(6, '0')}`;
  const stored = Array.from({ length: n }, () => id(next++));
  const processed = Array.from({ length: n }, (_, i) => id(1 + ((next * 7 + i * 13) % PROCESSED)));
  return { stored, processed };
};

const statusOf = async (ids: string[]) =>
  (await inboundMessages.getMany(db, ids)).map((m) => m?.status ?? 'unknown');

describe.each([
  ['before the table has statistics (a new installation)', false],
  ['analysed', true],
])('%s', (_name, analyse) => {
  beforeAll(async () => {
    if (analyse) await db.query('ANALYZE inbound_messages');
  });

  it.each([1, 20, 150])('completeBatch of %i messages probes the primary key only', async (n) => {
    const { stored, processed } = takeIds(n);
    const plans: PlanNode[][] = [];
    const items = [...stored, ...processed, 'inmsg_unknown'].map((id) => ({ id, deliveries: [] }));
    const marked = await inboundMessages.completeBatch(explaining(db, plans), items);
    expect(marked).toEqual(items.map((i) => stored.includes(i.id)));
    expect(plans).toHaveLength(1);
    expectPrimaryKeyOnly(readsOfMessages(plans[0]!));
    expect(await statusOf(stored)).toEqual(stored.map(() => 'processed'));
    // a second completion of the same messages marks nothing
    expect(await inboundMessages.completeBatch(db, items)).toEqual(items.map(() => false));
  });

  it('complete with effects marks through the primary key, once', async () => {
    const {
      stored: [id],
    } = takeIds(1);
    const plans: PlanNode[][] = [];
    const effects = jest.fn(async () => {});
    // with effects, complete's statements run in the transaction: explained there
    const explained = { transaction: (fn) => db.transaction((tx) => fn(explaining(tx, plans))) } as Pick<
      Db,
      'transaction'
    > as Db;
    expect(await inboundMessages.complete(explained, id!, [], effects)).toBe(true);
    expect(await inboundMessages.complete(db, id!, [], effects)).toBe(false);
    expect(effects).toHaveBeenCalledTimes(1);
    expectPrimaryKeyOnly(plans.flatMap(readsOfMessages));
  });

  it('the recovery sweep reads the stored messages through the partial index', async () => {
    const plans: PlanNode[][] = [];
    const ids = await inboundMessages.storedBefore(explaining(db, plans), 0, 100);
    expect(ids).toHaveLength(100);
    expect(await statusOf(ids)).toEqual(ids.map(() => 'stored'));
    expect(readsOfMessages(plans[0]!)).toContain('inbound_messages_stored_idx');
    expect(readsOfMessages(plans[0]!)).not.toContain('Seq Scan');
  });
});
