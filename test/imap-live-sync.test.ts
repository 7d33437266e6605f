/**
 * IMAP live sync against a real Dovecot: new INBOX mail posted once as INCOMING_EMAIL to the
 * mailer's webhook, mailboxes shared by replicas through a Redis lease (a replica that stops or
 * dies is taken over), reconnects with back-off and IMAP_ERROR after repeated connection
 * failures, disabled mailers not watched. Replicas are LiveSync instances in this process and a
 * spawned imap-backfill process, on the real PostgreSQL, RabbitMQ and Redis; posts go through
 * the outbox and the webhook dispatcher to a real HTTP receiver.
 */
import type { BackfillSettings, LiveSync } from '@mailyard/imap-backfill';
import { type OutboxRelay, type RunningService, startOutboxRelay } from '@mailyard/platform';
import { type Dovecot, startDovecot } from '@mailyard/testkit/peers/dovecot';
import { type Spawned, spawnTs, startOnFreePort } from '@mailyard/testkit/process';
import { eventually } from '@mailyard/testkit/webhooks';
import { start as startDispatcher } from '@mailyard/webhook-dispatcher';
import {
  type ImapHarness,
  PASS,
  USER,
  appendToInbox,
  createImapMailer,
  eventsTo,
  mail,
  readUpTo as readInboxUpTo,
  startHarness,
  startLiveSync,
  syncFailures,
} from './support/imap';

jest.setTimeout(300_000);

const ENV = {
  IMAP_SYNC: '1',
  IMAP_SYNC_POLL_MS: '2000',
  IMAP_SYNC_LEASE_MS: '3000',
  IMAP_SYNC_RETRY_BASE_MS: '200',
  IMAP_SYNC_ERROR_AFTER: '3',
  BACKFILL_POLL_MS: '100',
};

let h: ImapHarness;
let dovecot: Dovecot;
let dispatcher: RunningService;
let relay: OutboxRelay;
const replicas: LiveSync[] = [];

beforeAll(async () => {
  h = await startHarness(ENV);
  dovecot = await startDovecot({ user: USER, pass: PASS, messages: 3 });
  dispatcher = await startDispatcher(h.ctx);
  relay = startOutboxRelay(h.ctx);
});

afterEach(async () => {
  for (const r of replicas.splice(0)) await r.stop();
});

afterAll(async () => {
  await relay?.stop();
  await dispatcher?.stop();
  await dovecot?.stop();
  await h?.close();
});

/** A live sync replica in this process, re-reading the mailers to watch every 200 ms. */
function replica(over: Partial<BackfillSettings> = {}): LiveSync {
  const r = startLiveSync(h, over);
  replicas.push(r);
  return r;
}

/** Live INCOMING_EMAIL at `path` with this subject. */
const arrived = (path: string, subject: string) =>
  eventsTo(h, path, 'INCOMING_EMAIL').filter(
    (r) => (r.json as { details: { subject: string } }).details.subject === subject,
  );

/** Appends `subject` to INBOX and waits until it reached `path`. */
async function appendAndReceive(path: string, subject: string) {
  await appendToInbox(dovecot.host, mail(subject, new Date(), 'INBOX'));
  return eventually(() => arrived(path, subject)[0], `${subject} at ${path}`);
}

const readUpTo = (mailer: string) => readInboxUpTo(h, mailer);

it('a message appended to INBOX arrives once as INCOMING_EMAIL; existing mail is not posted', async () => {
  const id = await createImapMailer(h, '/live', dovecot.host);
  replica();
  await eventually(() => readUpTo(id), 'the watcher to read INBOX');
  const got = await appendAndReceive('/live', 'live-1');
  expect(got.headers['x-history-backfill-job-id']).toBeUndefined();
  expect(got.headers['x-hook-secret']).toBe('s3cret');
  expect(got.json).toMatchObject({
    event: 'INCOMING_EMAIL',
    success: true,
    details: {
      'mailer-id': id,
      'mailer-service': 'imap',
      'label-ids': ['INBOX'],
      'message-id': '<live-1@mailbox.test>',
      subject: 'live-1',
    },
  });
  // A later message as a barrier: by the time it arrived, a repeat of live-1 would have too.
  await appendAndReceive('/live', 'live-2');
  expect(arrived('/live', 'live-1')).toHaveLength(1);
  // The three seeded messages were there before the watch: history is the backfill's job.
  expect(eventsTo(h, '/live', 'INCOMING_EMAIL')).toHaveLength(2);
});

it('replicas share mailboxes by a Redis lease: one that stops or dies is taken over, nothing lost', async () => {
  const id = await createImapMailer(h, '/lease', dovecot.host);
  // Two-minute leases: within the test only a released lease lets another replica in.
  const a = replica({ syncLeaseMs: 120_000 });
  await eventually(() => a.watching().includes(id), 'replica A to watch');
  // Holding the lease comes before the first read of INBOX; mail appended before that read is
  // "existing mail" (not posted), so wait for the read mark.
  await eventually(() => readUpTo(id), 'replica A to read INBOX');
  const b = replica({ syncLeaseMs: 120_000 });
  await appendAndReceive('/lease', 'lease-a');
  expect(b.watching()).not.toContain(id);

  // A stops: it releases the lease and B takes the mailbox over.
  await a.stop();
  await eventually(() => b.watching().includes(id), 'replica B to take over');
  await appendAndReceive('/lease', 'lease-b');

  // B stops; a replica process takes over; it is killed; a new replica takes over after the lease.
  let child: Spawned | null = null;
  try {
    await b.stop();
    const started = await startOnFreePort(
      (port) => spawnTs('services/imap-backfill/src/main.ts', { ...h.env, OPS_PORT: String(port) }),
      /Mailyard imap-backfill started/,
    );
    child = started.p;
    // The process is the only replica now: lease-c arriving means it took the mailbox over.
    await appendAndReceive('/lease', 'lease-c');
    const metrics = await (await fetch(`http://127.0.0.1:${started.port}/metrics`)).text();
    expect(metrics).toMatch(/^mailyard_imap_sync_watched [1-9]/m);
    child.child.kill('SIGKILL');
    await child.exited;
    // Mail that comes while nobody watches is read by whoever takes over.
    await appendToInbox(dovecot.host, mail('lease-gap', new Date(), 'INBOX'));
    const d = replica();
    await eventually(() => d.watching().includes(id), 'replica D to take over after the lease');
    await eventually(() => arrived('/lease', 'lease-gap')[0], 'lease-gap');
    await appendAndReceive('/lease', 'lease-d');
  } finally {
    if (child && child.child.exitCode === null && child.child.signalCode === null)
      child.child.kill('SIGKILL');
  }
  for (const s of ['lease-a', 'lease-b', 'lease-c', 'lease-gap', 'lease-d'])
    expect(arrived('/lease', s)).toHaveLength(1);
}, 180_000); // several processes and leases in one story: longer than the 60 s default under load

it('connection failures reconnect with back-off; IMAP_ERROR once after repeated failures; mail flows again after', async () => {
  const id = await createImapMailer(h, '/flaky', dovecot.host);
  replica();
  await eventually(() => readUpTo(id), 'the watcher to read INBOX');
  const before = await syncFailures();
  await dovecot.pause();
  try {
    const error = await eventually(() => eventsTo(h, '/flaky', 'IMAP_ERROR')[0], 'IMAP_ERROR');
    expect(error.json).toEqual({
      event: 'IMAP_ERROR',
      success: false,
      details: {
        mailer_id: id,
        failed_reason: expect.any(String),
        attempts: 3,
        event_at: expect.any(String),
      },
    });
    expect(JSON.stringify(error.json)).not.toContain(PASS);
    // More failures in the same stretch send no further event.
    await eventually(async () => (await syncFailures()) - before >= 5, 'two more failed reconnects');
  } finally {
    await dovecot.resume();
  }
  await appendAndReceive('/flaky', 'after-outage');
  expect(eventsTo(h, '/flaky', 'IMAP_ERROR')).toHaveLength(1);
});

it('disabled and deactivated mailers are not watched; an active one on the same mailbox is', async () => {
  const off = await createImapMailer(h, '/off', dovecot.host);
  const on = await createImapMailer(h, '/on', dovecot.host);
  const r = replica();
  await eventually(() => r.watching().includes(off) && r.watching().includes(on), 'both watched');
  await h.ctx.db.query(`UPDATE mailers SET state = 'disabled' WHERE id = $1`, [off]);
  await eventually(() => !r.watching().includes(off), 'the disabled mailer dropped');
  await appendAndReceive('/on', 'while-disabled');
  await h.ctx.db.query(`UPDATE mailers SET state = 'deactivated' WHERE id = $1`, [on]);
  await eventually(() => !r.watching().includes(on), 'the deactivated mailer dropped');
  expect(eventsTo(h, '/off', 'INCOMING_EMAIL')).toHaveLength(0);
});
