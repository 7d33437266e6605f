/**
 * The MX service processes what it stored itself (services/inbound-smtp/src/index.ts): a message
 * accepted over SMTP is posted without any bus announcement; a message left `stored` (as after a
 * crash following the 250) is processed by the recovery sweep once its lease has passed, a younger
 * one is left alone; and
 * the in-process path racing the loading path on one message hands it to the dispatcher once.
 */
import { createLogger } from '@mailyard/platform';
import { type StoredInboundMessage, inboundMessages } from '@mailyard/store';
import { eventually } from '@mailyard/testkit/eventually';
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
