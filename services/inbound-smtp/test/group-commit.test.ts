/**
 * The MX service's shared round trips (group-commit.ts) on real PostgreSQL: concurrent calls
 * share one statement, each caller gets its own answer in order, a message is stored without a
 * bus announcement (the MX processes it in-process; recovery-sweep.ts finds it otherwise), a message whose own data fails is the only one to fail, and a
 * completed message is marked once (a second completion writes no deliveries).
 */
import { type Db, Sealer, generateSecretKey, parseSecretKey } from '@mailyard/platform';
import { type NewInboundMessage, inboundMessages } from '@mailyard/store';
import { insertInboundDomain, newTenant } from '@mailyard/testkit/fixtures';
import { useMigratedDatabase } from '@mailyard/testkit/migrated-database';
import { inboundRoundTrips } from '../src/group-commit';

const database = useMigratedDatabase();
let db: Db;
let tenantId: string;

/** `db` with its statements counted. */
function counting(): { db: Db; statements: () => number } {
  let n = 0;
  const wrapped = Object.create(db) as Db;
  wrapped.query = ((...args: Parameters<Db['query']>) => {
    n++;
    return db.query(...args);
  }) as Db['query'];
  return { db: wrapped, statements: () => n };
}

const message = (n: number, over: Partial<NewInboundMessage> = {}): NewInboundMessage => ({
  remoteIp: '192.0.2.1',
  helo: 'client.example.org',
  mailFrom: `sender${n}@example.org`,
  recipients: [{ address: `user${n}@gc.example.com`, tenantId, domain: 'gc.example.com', mailerId: '' }],
  raw: Buffer.from(`Subject: message ${n}\r\n\r\nbody ${n}\r\n`),
  ...over,
});

beforeAll(async () => {
  db = database.db();
  tenantId = await newTenant(db);
  // a route needs the verified sending domain behind the incoming domain
  await insertInboundDomain(db, new Sealer(parseSecretKey(generateSecretKey())), tenantId, {
    domain: 'gc.example.com',
    url: 'http://127.0.0.1:9/in',
    users: [{ name: 'known' }],
  });
});

test('concurrent messages are stored by one statement, without outbox announcements', async () => {
  const c = counting();
  const trips = inboundRoundTrips(c.db);
  const ids = await Promise.all([1, 2, 3, 4].map((n) => trips.store(message(n))));
  expect(c.statements()).toBe(1);
  expect(new Set(ids).size).toBe(4);
  const loaded = await Promise.all(ids.map((id) => trips.load(id)));
  expect(c.statements()).toBe(2);
  expect(loaded.map((m) => [m?.mailFrom, m?.raw.toString(), m?.status])).toEqual(
    [1, 2, 3, 4].map((n) => [
      `sender${n}@example.org`,
      `Subject: message ${n}\r\n\r\nbody ${n}\r\n`,
      'stored',
    ]),
  );
  const { rows } = await db.query<{ id: string }>(
    `SELECT message->'payload'->>'message_id' AS id FROM outbox WHERE message->'payload'->>'message_id' = ANY($1::text[])`,
    [ids],
  );
  expect(rows).toEqual([]);
});

test('a message whose own data fails gets the error; the others of its batch are stored', async () => {
  const trips = inboundRoundTrips(db);
  // A NUL character is invalid in a PostgreSQL text value (SQLSTATE 22021): that message's own fault.
  const results = await Promise.allSettled([
    trips.store(message(5)),
    trips.store(message(6, { helo: 'bad\u0000helo' })),
    trips.store(message(7)),
  ]);
  expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  const stored = await inboundMessages.getMany(
    db,
    results.map((r) => (r.status === 'fulfilled' ? r.value : 'inmsg_absent')),
  );
  expect(stored.map((m) => m?.mailFrom ?? null)).toEqual([
    'sender5@example.org',
    null,
    'sender7@example.org',
  ]);
});

test('RCPT lookups share a query and answer in order (null: no such domain)', async () => {
  const c = counting();
  const trips = inboundRoundTrips(c.db);
  const routes = await Promise.all([
    trips.route('gc.example.com', 'known'),
    trips.route('absent.example.com', 'known'),
    trips.route('gc.example.com', 'unknown'),
  ]);
  expect(c.statements()).toBe(1);
  expect(routes.map((r) => (r ? { domain: r.domain.domain, address: r.address } : null))).toEqual([
    { domain: 'gc.example.com', address: { active: true, strictReplies: false } },
    null,
    { domain: 'gc.example.com', address: null },
  ]);
});

test('completions share a statement; a message already processed writes no deliveries again', async () => {
  const trips = inboundRoundTrips(db);
  const [a, b] = await Promise.all([trips.store(message(8)), trips.store(message(9))]);
  const delivery = (body: string) => ({
    tenantId,
    targetKind: 'inbound' as const,
    webhookId: 'gc.example.com',
    eventTypes: ['INCOMING_EMAIL'],
    body,
  });
  expect(await trips.complete(a!, [delivery('a-1')])).toBe(true);
  const c = counting();
  const counted = inboundRoundTrips(c.db);
  const done = await Promise.all([
    counted.complete(a!, [delivery('a-2')]),
    counted.complete(b!, [delivery('b-1'), delivery('b-2')]),
  ]);
  expect(c.statements()).toBe(1);
  expect(done).toEqual([false, true]);
  const { rows } = await db.query<{ body: string }>(
    `SELECT body FROM webhook_deliveries WHERE body IN ('a-1', 'a-2', 'b-1', 'b-2') ORDER BY body`,
  );
  expect(rows.map((r) => r.body)).toEqual(['a-1', 'b-1', 'b-2']);
  expect((await trips.load(b!))?.status).toBe('processed');
});
