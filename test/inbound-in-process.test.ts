/**
 * The MX service processes what it stored itself (services/inbound-smtp/src/index.ts): a message
 * accepted over SMTP is posted without any bus announcement; a message left `stored` (as after a
 * crash following the 250) is processed by the recovery sweep once its lease has passed, a younger
 * one is left alone;
 * the in-process path racing the loading path on one message hands it to the dispatcher once; and
 * beyond the in-process cap (bounded-work.ts, MAX_IN_PROCESS) messages stay stored and the sweep
 * posts them, while those in work finish: every message posted once, none lost.
 */
import { createLogger } from '@mailyard/platform';
import { type StoredInboundMessage, inboundMessages } from '@mailyard/store';
import { eventually } from '@mailyard/testkit/eventually';
import { boundedWork } from '../services/inbound-smtp/src/bounded-work';
import {
  type ProcessDeps,
  processInboundMessage,
  processStoredMessage,
} from '../services/inbound-smtp/src/process-message';
import { startRecoverySweep } from '../services/inbound-smtp/src/recovery-sweep';
import { type InboundHarness, startInbound } from './support/inbound';

jest.setTimeout(120_000);

const DOMAIN = 'inproc.example.com';
let h: InboundHarness;

beforeAll(async () => {
  h = await startInbound({
    // the service's own sweep takes nothing during these tests: what is posted, its in-process
    // path (or the sweep called below) posted
    env: { INBOUND_RECOVERY_LEASE_MS: '600000' },
    domains: [{ domain: DOMAIN, wildcard: true }],
  });
});

afterAll(async () => {
  await h?.stop();
});

const withSubject = (subject: string) =>
  h.posted(DOMAIN).filter((p) => p.success && p.details.subject === subject);

/** Processing as the service does it, without DNS (no Authentication-Results). */
const deps = (): ProcessDeps => ({
  db: h.ctx.db,
  logger: createLogger('inbound-in-process', 'error'),
  authenticate: async () => null,
  returnPathKey: Buffer.alloc(32),
});

const newMessage = (subject: string, to = `x@${DOMAIN}`) => ({
  remoteIp: '192.0.2.9',
  helo: 'client.example.org',
  mailFrom: 'a@example.org',
  recipients: [{ address: to, tenantId: h.tenantId, domain: DOMAIN, mailerId: h.mailerIds[DOMAIN]! }],
  raw: Buffer.from(`Message-ID: <${subject}@example.org>\r\nSubject: ${subject}\r\n\r\nbody\r\n`),
});

test('a message accepted over SMTP is processed in-process: posted once, no bus announcement', async () => {
  const out = await h.swaks([
    '--to',
    `a@${DOMAIN}`,
    '--from',
    'a@example.org',
    '--header',
    'Subject: in-process',
  ]);
  const id = /queued as (inmsg_\S+)/.exec(out)![1]!;
  await eventually(() => withSubject('in-process').length === 1, 'the post');
  const { rows } = await h.ctx.db.query<{ status: string; announced: number }>(
    `SELECT status, (SELECT count(*)::int FROM outbox WHERE message->'payload'->>'message_id' = $1) AS announced
       FROM inbound_messages WHERE id = $1`,
    [id],
  );
  expect(rows).toEqual([{ status: 'processed', announced: 0 }]);
  expect(withSubject('in-process')).toHaveLength(1);
});

test('a message left stored past the lease (no process finished it) is posted by the recovery sweep', async () => {
  const [id] = await inboundMessages.storeBatch(h.ctx.db, [newMessage('recovered')], { announce: false });
  const [young] = await inboundMessages.storeBatch(h.ctx.db, [newMessage('young')], { announce: false });
  // as if the process that stored it had died after its 250: nothing else will process it
  await h.ctx.db.query(`UPDATE inbound_messages SET received_at = now() - interval '1 hour' WHERE id = $1`, [
    id,
  ]);
  const sweep = startRecoverySweep(h.ctx.db, deps().logger, (m) => processInboundMessage(deps(), m), {
    leaseMs: 60_000,
    intervalMs: 3_600_000,
  });
  try {
    expect(await sweep.sweep()).toBe(1);
  } finally {
    await sweep.stop();
  }
  expect((await inboundMessages.get(h.ctx.db, id!))?.status).toBe('processed');
  // within its lease a message is left to the process that stored it
  expect((await inboundMessages.get(h.ctx.db, young!))?.status).toBe('stored');
  await eventually(() => withSubject('recovered').length === 1, 'the post of the recovered message');
  expect(withSubject('recovered')).toHaveLength(1);
});

test('the in-process path racing recovery on one message hands it to the dispatcher once', async () => {
  const msg = newMessage('race');
  const [id] = await inboundMessages.storeBatch(h.ctx.db, [msg], { announce: false });
  const stored: StoredInboundMessage = { ...msg, id: id!, status: 'stored', receivedAt: new Date() };
  const results = await Promise.all([
    processStoredMessage(deps(), stored),
    processInboundMessage(deps(), id!),
    processStoredMessage(deps(), stored),
    processInboundMessage(deps(), id!),
  ]);
  expect(results.filter((r) => r === 'processed')).toHaveLength(1);
  const { rows } = await h.ctx.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM webhook_deliveries WHERE position('Subject: race' in body) > 0
        OR position('"subject":"race"' in body) > 0`,
  );
  expect(rows[0]!.n).toBe(1);
  await eventually(() => withSubject('race').length === 1, 'the post');
  expect(withSubject('race')).toHaveLength(1);
});

test('beyond the in-process cap messages stay stored and the recovery sweep posts them; each posted once', async () => {
  const LIMIT = 3;
  const subjects = Array.from({ length: 10 }, (_, i) => `capped-${i}`);
  const msgs = subjects.map((s) => newMessage(s));
  // stored as the MX stores them (one group commit), then offered to the in-process path
  const ids = await inboundMessages.storeBatch(h.ctx.db, msgs, { announce: false });
  const stored = (i: number): StoredInboundMessage => ({
    ...msgs[i]!,
    id: ids[i]!,
    status: 'stored',
    receivedAt: new Date(),
  });
  // the messages in work are held (as behind a hanging DNS lookup) until the sweep has run
  let release!: () => void;
  const held = new Promise<void>((r) => {
    release = r;
  });
  const outcomes: Array<'processed' | 'skipped'> = [];
  const errors: Error[] = [];
  const inProcess = boundedWork(
    LIMIT,
    async (m: StoredInboundMessage) => {
      await held;
      outcomes.push(await processStoredMessage(deps(), m));
    },
    (_m, err) => errors.push(err),
  );
  const taken = ids.map((_, i) => inProcess.offer(stored(i)));
  expect(taken).toEqual(ids.map((_, i) => i < LIMIT));
  expect(inProcess.inWork).toBe(LIMIT);
  const { rows } = await h.ctx.db.query<{ status: string }>(
    'SELECT status FROM inbound_messages WHERE id = ANY($1::text[])',
    [ids],
  );
  expect(rows.map((r) => r.status)).toEqual(ids.map(() => 'stored'));

  // the sweep takes every message still stored past its lease: those refused, and those held
  // in work (the lease of a message in work can pass too: then the sweep and the work race)
  const sweep = startRecoverySweep(h.ctx.db, deps().logger, (id) => processInboundMessage(deps(), id), {
    leaseMs: 0,
    intervalMs: 3_600_000,
  });
  try {
    // (also any message an earlier test left stored)
    expect(await sweep.sweep()).toBeGreaterThanOrEqual(ids.length);
  } finally {
    await sweep.stop();
  }
  expect((await inboundMessages.getMany(h.ctx.db, ids)).map((m) => m?.status)).toEqual(
    ids.map(() => 'processed'),
  );
  release();
  await eventually(() => inProcess.inWork === 0, 'the held work settled');
  // the held ones found their messages already processed: nothing written a second time
  expect(outcomes).toEqual(['skipped', 'skipped', 'skipped']);
  expect(errors).toEqual([]);
  // a slot is free again once the work settled
  const [later] = await inboundMessages.storeBatch(h.ctx.db, [newMessage('capped-later')], {
    announce: false,
  });
  expect(
    inProcess.offer({ ...newMessage('capped-later'), id: later!, status: 'stored', receivedAt: new Date() }),
  ).toBe(true);
  await eventually(() => inProcess.inWork === 0, 'the later message processed');
  expect(outcomes).toEqual(['skipped', 'skipped', 'skipped', 'processed']);

  const posted = () => [...subjects, 'capped-later'].map((s) => withSubject(s).length);
  await eventually(() => posted().every((n) => n >= 1), 'every message posted');
  const { rows: deliveries } = await h.ctx.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM webhook_deliveries WHERE body LIKE '%capped-%'`,
  );
  expect(deliveries[0]!.n).toBe(subjects.length + 1);
  expect(posted()).toEqual([...subjects, 'capped-later'].map(() => 1));
});

test('a failure in in-process work frees its slot and leaves the message stored for the sweep', async () => {
  const msg = newMessage('capped-failed');
  const [id] = await inboundMessages.storeBatch(h.ctx.db, [msg], { announce: false });
  const errors: string[] = [];
  const inProcess = boundedWork(
    1,
    (m: StoredInboundMessage) =>
      processStoredMessage({ ...deps(), authenticate: async () => Promise.reject(new Error('dns down')) }, m),
    (m, err) => errors.push(`${m.id}: ${err.message}`),
  );
  expect(inProcess.offer({ ...msg, id: id!, status: 'stored', receivedAt: new Date() })).toBe(true);
  expect(inProcess.offer({ ...msg, id: id!, status: 'stored', receivedAt: new Date() })).toBe(false);
  await eventually(() => inProcess.inWork === 0, 'the failed work settled');
  expect(errors).toEqual([`${id}: dns down`]);
  expect((await inboundMessages.get(h.ctx.db, id!))?.status).toBe('stored');
  expect(await processInboundMessage(deps(), id!)).toBe('processed');
  await eventually(() => withSubject('capped-failed').length === 1, 'the post after recovery');
});

test('a sweep that finds many messages has at most 4 of them loaded and in work at once', async () => {
  const msgs = Array.from({ length: 10 }, (_, i) => newMessage(`parallel ${i}`));
  const ids = await inboundMessages.storeBatch(h.ctx.db, msgs, { announce: false });
  await h.ctx.db.query(
    `UPDATE inbound_messages SET received_at = now() - interval '1 hour' WHERE id = ANY($1::text[])`,
    [ids],
  );
  let inWork = 0;
  let most = 0;
  const sweep = startRecoverySweep(
    h.ctx.db,
    deps().logger,
    async (id) => {
      most = Math.max(most, ++inWork);
      try {
        return await processInboundMessage(deps(), id);
      } finally {
        inWork--;
      }
    },
    { leaseMs: 60_000, intervalMs: 3_600_000 },
  );
  try {
    expect(await sweep.sweep()).toBeGreaterThanOrEqual(10);
  } finally {
    await sweep.stop();
  }
  expect(most).toBe(4);
  expect((await inboundMessages.getMany(h.ctx.db, ids)).map((m) => m?.status)).toEqual(
    ids.map(() => 'processed'),
  );
});
