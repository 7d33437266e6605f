/**
 * Live sync against IMAP servers a tenant controls (libs/testkit/peers/hostile-imap), each
 * mailer's read mark at UID 0 so the watcher fetches the server's INBOX as new mail, while a
 * real Dovecot mailer is watched by the same replica and still gets its new mail:
 * - a huge literal (1 GB announced, streamed forever): refused at its announcement, the
 *   watcher reconnects with back-off and sends IMAP_ERROR naming the limit; nothing is held;
 * - UIDs nobody asked for: ignored and counted; only the requested messages are posted, once;
 * - an endless FETCH: cut by the stray bound after what was asked for was posted (once, with the
 *   read mark), the watcher reconnects; a listing that never ends: cut by the FETCH deadline
 *   every round, IMAP_ERROR;
 * - a message over IMAP_MAX_MESSAGE_BYTES: not fetched, posted once as the error form.
 * Replicas are LiveSync instances in this process on the real PostgreSQL, RabbitMQ and Redis;
 * posts go through the outbox and the webhook dispatcher to a real HTTP receiver.
 */
import type { LiveSync } from '@mailyard/imap-backfill';
import { type OutboxRelay, type RunningService, metricsRegistry, startOutboxRelay } from '@mailyard/platform';
import { imapSync } from '@mailyard/store';
import { watchMemory } from '@mailyard/testkit/memory-peak';
import { type Dovecot, startDovecot } from '@mailyard/testkit/peers/dovecot';
import {
  type HostileImap,
  type HostileImapAttack,
  startHostileImap,
} from '@mailyard/testkit/peers/hostile-imap';
import { eventually } from '@mailyard/testkit/webhooks';
import { start as startDispatcher } from '@mailyard/webhook-dispatcher';
import {
  type ImapHarness,
  PASS,
  USER,
  appendToInbox,
  createImapMailer,
  eventsTo,
  insertImapMailer,
  mail,
  startHarness,
  startLiveSync,
  syncFailures,
} from './support/imap';

jest.setTimeout(300_000);

const CAP = 1024 * 1024;
const ENV = {
  IMAP_SYNC: '1',
  IMAP_SYNC_POLL_MS: '2000',
  IMAP_SYNC_LEASE_MS: '3000',
  IMAP_SYNC_RETRY_BASE_MS: '200',
  IMAP_SYNC_ERROR_AFTER: '3',
  IMAP_COMMAND_TIMEOUT_MS: '3000',
  IMAP_MAX_MESSAGE_BYTES: String(CAP),
  BACKFILL_POLL_MS: '100',
};
const SOCKET_SLACK = 16 * 1024 * 1024;
const MEMORY_SLACK = 96 * 1024 * 1024;

let h: ImapHarness;
let dovecot: Dovecot;
let dispatcher: RunningService;
let relay: OutboxRelay;
let sync: LiveSync;
let honestId: string;
const hostiles: HostileImap[] = [];

beforeAll(async () => {
  h = await startHarness(ENV);
  dovecot = await startDovecot({ user: USER, pass: PASS, messages: 1 });
  dispatcher = await startDispatcher(h.ctx);
  relay = startOutboxRelay(h.ctx);
  sync = startLiveSync(h);
  honestId = await createImapMailer(h, '/honest', dovecot.host);
  await eventually(() => imapSync.state(h.ctx.db, honestId), 'the honest watcher to read INBOX');
});

afterAll(async () => {
  await sync?.stop();
  await relay?.stop();
  await dispatcher?.stop();
  for (const s of hostiles) await s.stop();
  await dovecot?.stop();
  await h?.close();
});

/** A hostile server and its mailer, whose read mark says nothing of INBOX was read yet. */
async function hostileMailer(id: string, attack: HostileImapAttack): Promise<HostileImap> {
  const s = await startHostileImap({ attack, messages: 3 });
  hostiles.push(s);
  await insertImapMailer(h, id, s.host);
  // The server's UIDVALIDITY is 7: UIDs 1..3 are new mail to the watcher.
  await imapSync.saveState(h.ctx.db, h.tenantId, id, '7', 0, null);
  return s;
}

/** Waits until the watcher read UIDs 1..3 of `id` and posted three messages. */
async function postedAllThree(id: string): Promise<void> {
  await eventually(async () => (await imapSync.state(h.ctx.db, id))?.lastUid === 3, 'the read mark at UID 3');
  await eventually(() => posts(id).length >= 3, 'three posts');
}

/** Ends the watch of a hostile mailer (a disabled mailer is not watched). */
async function retire(id: string): Promise<void> {
  await h.ctx.db.query(`UPDATE mailers SET state = 'disabled' WHERE id = $1`, [id]);
  await eventually(() => !sync.watching().includes(id), `the watch of ${id} to end`);
}

/** The honest mailbox still works: a message appended now arrives. */
async function honestStillServed(subject: string): Promise<void> {
  await appendToInbox(dovecot.host, mail(subject, new Date(), 'INBOX'));
  await eventually(
    () =>
      eventsTo(h, '/honest', 'INCOMING_EMAIL').find(
        (r) => (r.json as { details: { subject: string } }).details.subject === subject,
      ),
    `${subject} at /honest`,
  );
}

/**
 * A hostile mailer watched until its IMAP_ERROR, while the honest mailbox still gets new mail:
 * the server, the event's JSON and the peak memory growth meanwhile.
 */
async function untilImapError(id: string, attack: HostileImapAttack) {
  const memory = watchMemory();
  const evil = await hostileMailer(id, attack);
  const error = await eventually(() => eventsTo(h, `/${id}`, 'IMAP_ERROR')[0], 'IMAP_ERROR', 60_000);
  await honestStillServed(`live-during-${id}`);
  return { evil, json: error.json, peak: memory.stop() };
}

const posts = (id: string) =>
  eventsTo(h, `/${id}`, 'INCOMING_EMAIL').map(
    (r) => r.json as { success: boolean; details: Record<string, string> },
  );

const strays = async (): Promise<number> =>
  (await metricsRegistry.getSingleMetric('mailyard_imap_stray_fetch_responses_total')?.get())?.values[0]
    ?.value ?? 0;

it('a huge literal is refused at its announcement: reconnects with back-off, IMAP_ERROR names the limit, nothing held', async () => {
  const id = 'basic_imap_live_huge';
  const attack = { kind: 'huge-literal', on: 'source', announce: 1_000_000_000 } as const;
  const { evil, json, peak } = await untilImapError(id, attack);
  expect(json).toMatchObject({
    event: 'IMAP_ERROR',
    success: false,
    details: {
      mailer_id: id,
      attempts: 3,
      failed_reason: `${evil.host}: the server sent a response over the limit: Literal size 1000000000 exceeds maximum allowed size of ${CAP + 1} bytes (LiteralTooLarge)`,
    },
  });
  expect(evil.attacks()).toBeGreaterThanOrEqual(3);
  // Each attempt stopped reading at the announcement.
  expect(evil.bytesSent()).toBeLessThan(evil.attacks() * SOCKET_SLACK);
  expect(peak).toBeLessThan(MEMORY_SLACK);
  expect(posts(id)).toEqual([]);
  await retire(id);
});

it('UIDs nobody asked for are ignored and counted; each requested message is posted once', async () => {
  const id = 'basic_imap_live_unreq';
  const before = await strays();
  const evil = await hostileMailer(id, { kind: 'unrequested-uids', on: 'source', extra: 50 });
  await postedAllThree(id);
  await honestStillServed('live-during-unreq');
  expect(
    posts(id)
      .map((p) => p.details.subject)
      .sort(),
  ).toEqual(['hostile-1', 'hostile-2', 'hostile-3']);
  expect(evil.attacks()).toBe(1);
  expect((await strays()) - before).toBe(3 + 50);
  await retire(id);
});

it('an endless FETCH of strays is cut by the stray bound: what was asked for is posted once, the watcher reconnects', async () => {
  const id = 'basic_imap_live_endless';
  const failures = await syncFailures();
  const memory = watchMemory();
  const evil = await hostileMailer(id, { kind: 'endless-fetch', on: 'source' });
  // The messages were posted (and the read mark moved with each) before the flood ended the round.
  await eventually(async () => (await imapSync.state(h.ctx.db, id))?.lastUid === 3, 'the read mark at UID 3');
  await eventually(async () => (await syncFailures()) > failures, 'the connection failure');
  await eventually(() => evil.connections() >= 2 && sync.watching().includes(id), 'the watcher to reconnect');
  await honestStillServed('live-during-endless');
  const peak = memory.stop();
  expect(peak).toBeLessThan(MEMORY_SLACK);
  // Reconnected from the read mark: nothing left to fetch, so the attack was met once.
  expect(evil.attacks()).toBe(1);
  expect(
    posts(id)
      .map((p) => p.details.subject)
      .sort(),
  ).toEqual(['hostile-1', 'hostile-2', 'hostile-3']);
  await retire(id);
});

it('a listing that never ends is cut by the FETCH deadline every round: IMAP_ERROR names it', async () => {
  const id = 'basic_imap_live_untagged';
  const { evil, json, peak } = await untilImapError(id, { kind: 'endless-untagged', on: 'listing' });
  expect(json).toMatchObject({
    event: 'IMAP_ERROR',
    success: false,
    details: {
      mailer_id: id,
      attempts: 3,
      failed_reason: `${evil.host}: FETCH: no requested message and no end within 3000 ms`,
    },
  });
  expect(peak).toBeLessThan(MEMORY_SLACK);
  expect(posts(id)).toEqual([]);
  await retire(id);
});

it('a message over IMAP_MAX_MESSAGE_BYTES is not fetched and is posted once as the error form naming it', async () => {
  const id = 'basic_imap_live_big';
  const evil = await hostileMailer(id, { kind: 'big-message', uid: 2, bytes: 8 * CAP, lie: false });
  await postedAllThree(id);
  await honestStillServed('live-during-big');
  const got = posts(id);
  expect(
    got
      .filter((p) => p.success)
      .map((p) => p.details.subject)
      .sort(),
  ).toEqual(['hostile-1', 'hostile-3']);
  expect(got.filter((p) => !p.success)).toEqual([
    {
      event: 'INCOMING_EMAIL',
      success: false,
      details: {
        error: expect.stringMatching(
          new RegExp(
            `^message too large: ${8 * CAP} bytes \\(limit ${CAP}\\); folder INBOX, id 2, received \\S+Z$`,
          ),
        ),
        'mailer-id': id,
        'webhook-id': id,
      },
    },
  ]);
  expect(evil.bytesSent()).toBeLessThan(CAP);
  await retire(id);
});
