/**
 * History backfill against IMAP servers a tenant controls (libs/testkit/peers/hostile-imap: TLS
 * on port 993 of a loopback alias, a few lines over node:tls), each attack beside an honest job
 * on a real Dovecot in the same worker, which must complete meanwhile:
 * - a huge literal (1 GB announced, streamed forever): refused at its announcement; the job
 *   fails at once with the reason; the worker never read more than its socket buffers;
 * - UIDs nobody asked for (listing and source FETCH, each requested UID twice): ignored and
 *   counted; only the requested messages are posted, the `count` cap holds;
 * - an endless FETCH (rows of unrequested UIDs forever, or untagged lines forever, never the
 *   tagged OK): ended by the stray bound or the FETCH deadline, a transient failure retried
 *   per the job rules, then failed with the reason; memory stays flat;
 * - messages over IMAP_MAX_MESSAGE_BYTES (announced by RFC822.SIZE or not): not read whole,
 *   posted as the INCOMING_EMAIL error form naming them;
 * - a mailbox client that hands on more than asked (fault injected around the real client):
 *   the count cap is checked inside the fetch loop.
 * The worker is a JobWorker in this process on the real PostgreSQL, RabbitMQ and Redis, with
 * the webhook dispatcher posting to a real HTTP receiver.
 */
import { JobWorker, type MailboxClient, backfillSettings, mailboxOpener } from '@mailyard/imap-backfill';
import { type RunningService, metricsRegistry } from '@mailyard/platform';
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
  BACKFILL_TEST_ENV,
  DAY,
  type ImapHarness,
  PASS,
  USER,
  ago,
  createImapMailer,
  delivered,
  finished,
  insertImapMailer,
  jobMessages,
  rfc3339,
  startHarness,
  startJob,
  status,
} from './support/imap';

jest.setTimeout(300_000);

/** The per-message cap of this file (1 MiB: oversize messages stay cheap to serve). */
const CAP = 1024 * 1024;
const COMMAND_TIMEOUT_MS = 3000;
const ENV = {
  ...BACKFILL_TEST_ENV,
  IMAP_SYNC: '0',
  IMAP_COMMAND_TIMEOUT_MS: String(COMMAND_TIMEOUT_MS),
  IMAP_MAX_MESSAGE_BYTES: String(CAP),
};
/** Messages of the honest Dovecot INBOX. */
const HONEST = 30;
/** What a client that stops reading can have received: TLS and socket buffers, far below the attack. */
const SOCKET_SLACK = 16 * 1024 * 1024;
/** Memory growth allowed during an attack (the honest job's parsing and posting included). */
const MEMORY_SLACK = 96 * 1024 * 1024;
const GREEDY = 'basic_imap_greedy';

let h: ImapHarness;
let dovecot: Dovecot;
let dispatcher: RunningService;
let worker: JobWorker;
let honestId: string;
const hostiles: HostileImap[] = [];

/**
 * A client that hands on every message twice (the second time after all the first): the fault
 * the IMAP client's own filter prevents, injected here to show the cap holds in the fetch loop.
 */
function greedy(mailbox: MailboxClient): MailboxClient {
  const wrapped = Object.create(mailbox) as MailboxClient;
  wrapped.fetch = async function* (refs) {
    const seen = [];
    for await (const m of mailbox.fetch(refs)) {
      seen.push(m);
      yield m;
    }
    yield* seen;
  };
  return wrapped;
}

beforeAll(async () => {
  h = await startHarness(ENV);
  dovecot = await startDovecot({ user: USER, pass: PASS, messages: HONEST });
  dispatcher = await startDispatcher(h.ctx);
  const settings = backfillSettings(h.config);
  const open = mailboxOpener(h.ctx.db, h.ctx.sealer, settings);
  worker = new JobWorker({
    db: h.ctx.db,
    bus: h.ctx.bus,
    logger: h.ctx.logger,
    settings,
    openMailbox: async (m) => (m.id === GREEDY ? greedy(await open(m)) : open(m)),
    owner: 'hostile-test',
  });
  worker.start();
  honestId = await createImapMailer(h, '/honest', dovecot.host);
});

afterAll(async () => {
  await worker?.stop();
  await dispatcher?.stop();
  for (const s of hostiles) await s.stop();
  await dovecot?.stop();
  await h?.close();
});

async function hostile(attack: HostileImapAttack, messages = 3): Promise<HostileImap> {
  const s = await startHostileImap({ attack, messages });
  hostiles.push(s);
  return s;
}

const insertMailer = (id: string, host: string) => insertImapMailer(h, id, host);

const lastMonth = { window_start: rfc3339(ago(30 * DAY)) };

/** Starts a full import of the honest mailbox; resolves once every message of it arrived. */
async function honestJob(): Promise<() => Promise<void>> {
  const res = await startJob(h, honestId, { window_start: rfc3339(ago(366 * DAY)) });
  expect(res.status).toBe(200);
  const job = res.body.jobId as string;
  return async () => {
    expect(await finished(h, honestId, job, 120_000)).toMatchObject({ status: 'done', processed: HONEST });
    expect(await delivered(h, job, HONEST)).toHaveLength(HONEST);
  };
}

async function start(mailer: string, body: object): Promise<string> {
  const res = await startJob(h, mailer, body);
  expect(res.status).toBe(200);
  return res.body.jobId as string;
}

const attempts = async (job: string) =>
  (await h.ctx.db.query<{ attempts: number }>('SELECT attempts FROM backfill_jobs WHERE id = $1', [job]))
    .rows[0]!.attempts;

const strays = async (): Promise<number> =>
  (await metricsRegistry.getSingleMetric('mailyard_imap_stray_fetch_responses_total')?.get())?.values[0]
    ?.value ?? 0;

const subjects = (job: string) =>
  jobMessages(h, job)
    .map((r) => (r.json as { details: { subject?: string } }).details.subject)
    .sort();

it('a huge literal (1 GB announced, streamed forever) is refused at its announcement: the job fails at once, nothing is held', async () => {
  const evil = await hostile({ kind: 'huge-literal', on: 'source', announce: 1_000_000_000 });
  const id = await insertMailer('basic_imap_huge', evil.host);
  const memory = watchMemory();
  const honest = await honestJob();
  const job = await start(id, lastMonth);
  // Ends when the job does, or when the server got rid of more than a stopped reader could take.
  const outcome = await eventually(async () => {
    const s = await status(h, id, job);
    if (['done', 'failed'].includes(s.body.status)) return s.body;
    return evil.bytesSent() > SOCKET_SLACK ? { overrun: evil.bytesSent() } : null;
  }, 'the huge-literal job to end');
  const peak = memory.stop();
  expect(outcome).toMatchObject({
    status: 'failed',
    processed: 0,
    failedReason: `${evil.host}: the server sent a response over the limit: Literal size 1000000000 exceeds maximum allowed size of ${CAP + 1} bytes (LiteralTooLarge)`,
  });
  // Terminal: the server would announce it again; not retried.
  expect(await attempts(job)).toBe(0);
  expect(evil.attacks()).toBe(1);
  expect(evil.bytesSent()).toBeLessThan(SOCKET_SLACK);
  expect(peak).toBeLessThan(MEMORY_SLACK);
  console.log(`huge literal: server sent ${evil.bytesSent()} bytes; peak memory growth ${peak} bytes`);
  await honest();
});

it('UIDs nobody asked for (listing and source, each requested UID twice) are ignored and counted; the count cap holds', async () => {
  const onSource = await hostile({ kind: 'unrequested-uids', on: 'source', extra: 50 });
  const onListing = await hostile({ kind: 'unrequested-uids', on: 'listing', extra: 50 });
  const a = await insertMailer('basic_imap_unreq_src', onSource.host);
  const b = await insertMailer('basic_imap_unreq_list', onListing.host);
  const before = await strays();
  const honest = await honestJob();
  const jobs = [await start(a, lastMonth), await start(b, lastMonth)];
  for (const [mailer, job] of [
    [a, jobs[0]!],
    [b, jobs[1]!],
  ] as const) {
    expect(await finished(h, mailer, job)).toMatchObject({ status: 'done', processed: 3 });
    await delivered(h, job, 3);
  }
  await honest();
  // Each attack (one per FETCH: the listing server meets every slice's listing) sends the 3
  // requested UIDs again and 50 others: all counted, none posted.
  expect(onSource.attacks()).toBe(1);
  expect(onListing.attacks()).toBeGreaterThanOrEqual(1);
  expect((await strays()) - before).toBe((3 + 50) * (onSource.attacks() + onListing.attacks()));
  for (const job of jobs) expect(subjects(job)).toEqual(['hostile-1', 'hostile-2', 'hostile-3']);

  // count 2: the newest two (UID 1 is an hour old, UID 2 two hours), whatever else the server sends.
  const capped = await start(a, { count: 2 });
  expect(await finished(h, a, capped)).toMatchObject({ status: 'done', processed: 2, target: 2 });
  await delivered(h, capped, 2);
  expect(subjects(capped)).toEqual(['hostile-1', 'hostile-2']);
});

/**
 * A job against a server that never ends its FETCH, beside an honest job: the job's end, the
 * server, the peak memory growth meanwhile; the honest job has completed.
 */
async function endlessJob(id: string, attack: HostileImapAttack) {
  const evil = await hostile(attack);
  await insertMailer(id, evil.host);
  const memory = watchMemory();
  const honest = await honestJob();
  const job = await start(id, lastMonth);
  const end = await finished(h, id, job, 120_000);
  const peak = memory.stop();
  await honest();
  return { evil, job, end, peak };
}

it('an endless FETCH of unrequested UIDs is cut by the stray bound: retried per the job rules, then failed; memory flat', async () => {
  const { evil, job, end, peak } = await endlessJob('basic_imap_endless', {
    kind: 'endless-fetch',
    on: 'source',
  });
  expect(end).toMatchObject({
    status: 'failed',
    failedReason: `gave up after 4 attempts: ${evil.host}: FETCH: the server sent more than 1003 responses nobody asked for`,
  });
  // BACKFILL_RETRY_MAX 3: one first try and three retries, each met the attack.
  expect(await attempts(job)).toBe(3);
  expect(evil.attacks()).toBe(4);
  expect(peak).toBeLessThan(MEMORY_SLACK);
  // What was asked for was posted (at least once: no checkpoint covered it); nothing else.
  await delivered(h, job, 3);
  expect(new Set(subjects(job))).toEqual(new Set(['hostile-1', 'hostile-2', 'hostile-3']));
});

it('an endless stream of untagged lines (never the tagged OK) is cut by the FETCH deadline: retried, then failed', async () => {
  const { evil, end, peak } = await endlessJob('basic_imap_untagged', {
    kind: 'endless-untagged',
    on: 'source',
  });
  expect(end).toMatchObject({
    status: 'failed',
    failedReason: `gave up after 4 attempts: ${evil.host}: FETCH: no requested message and no end within ${COMMAND_TIMEOUT_MS} ms`,
  });
  expect(evil.attacks()).toBe(4);
  expect(peak).toBeLessThan(MEMORY_SLACK);
});

it('messages over IMAP_MAX_MESSAGE_BYTES are not read whole and are posted as the error form naming them', async () => {
  // UID 2 is 8 MiB; one server says so in RFC822.SIZE, the other claims 100 bytes.
  const told = await hostile({ kind: 'big-message', uid: 2, bytes: 8 * CAP, lie: false });
  const lied = await hostile({ kind: 'big-message', uid: 2, bytes: 8 * CAP, lie: true });
  for (const [server, name] of [
    [told, 'basic_imap_big_told'],
    [lied, 'basic_imap_big_lied'],
  ] as const) {
    const id = await insertMailer(name, server.host);
    const job = await start(id, lastMonth);
    expect(await finished(h, id, job)).toMatchObject({ status: 'done', processed: 3 });
    await delivered(h, job, 3);
    const errors = jobMessages(h, job)
      .map((r) => r.json as { success: boolean; details: Record<string, unknown> })
      .filter((p) => !p.success);
    const size = server === told ? `${8 * CAP} bytes` : `more than ${CAP} bytes`;
    expect(errors).toEqual([
      {
        event: 'INCOMING_EMAIL',
        success: false,
        details: {
          error: expect.stringMatching(
            new RegExp(`^message too large: ${size} \\(limit ${CAP}\\); folder INBOX, id 2, received \\S+Z$`),
          ),
          'mailer-id': id,
          'webhook-id': id,
        },
      },
    ]);
    expect(subjects(job).filter(Boolean)).toEqual(['hostile-1', 'hostile-3']);
  }
  // Told: never fetched; lied: fetched up to the cap and one byte, not its 8 MiB.
  expect(told.bytesSent()).toBeLessThan(CAP);
  expect(lied.bytesSent()).toBeGreaterThan(CAP);
  expect(lied.bytesSent()).toBeLessThan(2 * CAP);
});

it('the count cap is checked inside the fetch loop: a client handing on more than asked cannot pass it', async () => {
  await insertMailer(GREEDY, dovecot.host);
  const job = await start(GREEDY, { count: 3 });
  expect(await finished(h, GREEDY, job)).toMatchObject({ status: 'done', processed: 3, target: 3 });
  await delivered(h, job, 3);
  // A later job of the same mailer as a barrier: any extra post of the first would be in by then.
  const barrier = await start(GREEDY, { count: 1 });
  await finished(h, GREEDY, barrier);
  await delivered(h, barrier, 1);
  expect(jobMessages(h, job)).toHaveLength(3);
});
