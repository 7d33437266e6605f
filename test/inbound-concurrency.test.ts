/**
 * Concurrency with Postfix's own load generator: `smtp-source -s 20 -m 200 -N` (20 parallel
 * sessions, 200 messages, recipients numbered 1rcpt..200rcpt) against the MX service. Every
 * message must be stored, processed once and posted once: exactly 200 INCOMING_EMAIL payloads at
 * the receiver, one per recipient, none lost, none duplicated.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { eventually } from '@mailyard/testkit/eventually';
import { type InboundHarness, startInbound } from './support/inbound';

jest.setTimeout(300_000);
const run = promisify(execFile);

const DOMAIN = 'conc.example.com';
const MESSAGES = 200;
let h: InboundHarness;

beforeAll(async () => {
  h = await startInbound({
    env: { INBOUND_MAX_PER_IP: '50' },
    domains: [{ domain: DOMAIN, wildcard: true }],
  });
});

afterAll(async () => {
  await h?.stop();
});

test(`smtp-source -s 20 -m ${MESSAGES}: exactly ${MESSAGES} payloads posted, one per message`, async () => {
  const { stdout } = await run('smtp-source', [
    '-c',
    '-N',
    '-s',
    '20',
    '-m',
    String(MESSAGES),
    '-f',
    'load@example.org',
    '-t',
    `rcpt@${DOMAIN}`,
    '-S',
    'concurrency',
    `127.0.0.1:${h.port}`,
  ]);
  expect(stdout.trim().split(/\r|\n/).pop()).toBe(String(MESSAGES)); // -c: DATA completed 200 times

  // settled: every message processed and every delivery delivered, so nothing more can be posted
  const settled = async () => {
    const { rows } = await h.ctx.db.query<{ processed: number; delivered: number; other: number }>(
      `SELECT (SELECT count(*)::int FROM inbound_messages WHERE status = 'processed') AS processed,
              (SELECT count(*)::int FROM webhook_deliveries WHERE status = 'delivered') AS delivered,
              (SELECT count(*)::int FROM webhook_deliveries WHERE status <> 'delivered') AS other`,
    );
    return rows[0]!;
  };
  await eventually(
    async () => {
      const s = await settled();
      return s.processed >= MESSAGES && s.delivered >= MESSAGES && s.other === 0;
    },
    `${MESSAGES} messages processed and delivered`,
    240_000,
  );
  expect(await settled()).toEqual({ processed: MESSAGES, delivered: MESSAGES, other: 0 });
  const { rows } = await h.ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM inbound_messages');
  expect(rows[0]!.n).toBe(MESSAGES);

  const posted = h.posted(DOMAIN);
  expect(posted).toHaveLength(MESSAGES);
  const recipients = posted.map((p) => (p.success ? p.details.recipient : `error: ${p.details.error}`));
  expect(recipients.sort()).toEqual(
    Array.from({ length: MESSAGES }, (_, i) => `${i + 1}rcpt@${DOMAIN}`).sort(),
  );
  for (const p of posted)
    expect(p).toMatchObject({ success: true, details: { subject: 'concurrency', from: 'load@example.org' } });
});
