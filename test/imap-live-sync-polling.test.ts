/**
 * IMAP live sync against a real Dovecot that does not announce IDLE (its `imap_capability`
 * setting, libs/testkit peers/dovecot `NO_IDLE_CAPABILITY`): the watcher falls back to polling
 * INBOX every IMAP_SYNC_POLL_MS, and new mail still arrives once as INCOMING_EMAIL at the
 * mailer's webhook, through the outbox and the webhook dispatcher, on the real PostgreSQL,
 * RabbitMQ and Redis. The poll interval is far shorter than the lease here, so each arrival is
 * the poll's, not a lease-driven reconnect's.
 */
import { type LiveSync, backfillSettings } from '@mailyard/imap-backfill';
import { type OutboxRelay, type RunningService, startOutboxRelay } from '@mailyard/platform';
import { type Dovecot, NO_IDLE_CAPABILITY, startDovecot } from '@mailyard/testkit/peers/dovecot';
import { eventually } from '@mailyard/testkit/webhooks';
import { start as startDispatcher } from '@mailyard/webhook-dispatcher';
import { ImapFlow } from 'imapflow';
import {
  type ImapHarness,
  PASS,
  USER,
  appendToInbox,
  createImapMailer,
  eventsTo,
  mail,
  readUpTo,
  startHarness,
  startLiveSync,
  syncFailures,
} from './support/imap';

jest.setTimeout(300_000);

const ENV = {
  IMAP_SYNC: '1',
  IMAP_SYNC_POLL_MS: '500',
  IMAP_SYNC_LEASE_MS: '120000',
  BACKFILL_POLL_MS: '100',
};

let h: ImapHarness;
let dovecot: Dovecot;
let dispatcher: RunningService;
let relay: OutboxRelay;
let sync: LiveSync | null = null;

beforeAll(async () => {
  h = await startHarness(ENV);
  dovecot = await startDovecot({ user: USER, pass: PASS, messages: 2, imapCapability: NO_IDLE_CAPABILITY });
  dispatcher = await startDispatcher(h.ctx);
  relay = startOutboxRelay(h.ctx);
});

afterAll(async () => {
  await sync?.stop();
  await relay?.stop();
  await dispatcher?.stop();
  await dovecot?.stop();
  await h?.close();
});

/** The capabilities a logged-in client sees. */
async function capabilities(): Promise<string[]> {
  const client = new ImapFlow({
    host: dovecot.host,
    port: 993,
    secure: true,
    auth: { user: USER, pass: PASS },
    logger: false,
  });
  await client.connect();
  const caps = [...client.capabilities.keys()];
  await client.logout();
  return caps;
}

const arrived = (subject: string) =>
  eventsTo(h, '/poll', 'INCOMING_EMAIL').filter(
    (r) => (r.json as { details: { subject: string } }).details.subject === subject,
  );

async function appendAndReceive(subject: string) {
  await appendToInbox(dovecot.host, mail(subject, new Date(), 'INBOX'));
  return eventually(() => arrived(subject)[0], `${subject} by polling`);
}

it('without IDLE on the server, new INBOX mail arrives by polling, once each', async () => {
  const caps = await capabilities();
  expect(caps).toContain('IMAP4rev1');
  expect(caps).not.toContain('IDLE');

  const id = await createImapMailer(h, '/poll', dovecot.host);
  expect(backfillSettings(h.config).syncPollMs).toBe(500);
  sync = startLiveSync(h);
  // Mail appended before the first read of INBOX is existing mail (the backfill's): wait for it.
  await eventually(() => readUpTo(h, id), 'the watcher to read INBOX');

  const first = await appendAndReceive('poll-1');
  expect(first.json).toMatchObject({
    event: 'INCOMING_EMAIL',
    details: { 'mailer-id': id, 'mailer-service': 'imap', 'label-ids': ['INBOX'], subject: 'poll-1' },
  });
  // Several polls later, on the same connection: more mail still arrives.
  await appendAndReceive('poll-2');
  await appendAndReceive('poll-3');
  expect(arrived('poll-1')).toHaveLength(1);
  expect(arrived('poll-2')).toHaveLength(1);
  // The two seeded messages were there before the watch.
  expect(eventsTo(h, '/poll', 'INCOMING_EMAIL')).toHaveLength(3);
  expect(sync.watching()).toEqual([id]);
  // Polling, not reconnecting: the watch never lost its connection.
  expect(await syncFailures()).toBe(0);
});
