/**
 * History backfill jobs that do not run in one go, against a real Dovecot with a larger mailbox:
 * aborted mid-job, a worker that stops (hands its job back), a worker process killed mid-job
 * (its ops port checked first), the IMAP server lost mid-job (retries with back-off), and
 * UIDVALIDITY changed while the job was stopped. Workers are JobWorker "replicas" on the real
 * PostgreSQL and RabbitMQ (and one spawned service process), delivering through the webhook
 * dispatcher to a real HTTP receiver. Every message must arrive (at-least-once).
 */
import { type BackfillSettings, JobWorker, backfillSettings, mailboxOpener } from '@mailyard/imap-backfill';
import type { RunningService } from '@mailyard/platform';
import { backfillJobs } from '@mailyard/store';
import { type Dovecot, startDovecot } from '@mailyard/testkit/peers/dovecot';
import { spawnTs, startOnFreePort } from '@mailyard/testkit/process';
import { eventually } from '@mailyard/testkit/webhooks';
import { start as startDispatcher } from '@mailyard/webhook-dispatcher';
import {
  DAY,
  type ImapHarness,
  PASS,
  USER,
  abortJob,
  ago,
  createImapMailer,
  finished,
  jobMessages,
  lifecycle,
  rfc3339,
  startHarness,
  startJob,
  status,
} from './support/imap';

jest.setTimeout(300_000);

const N = 1500;
const ENV = {
  BACKFILL_POLL_MS: '100',
  BACKFILL_SLICE_DAYS: '30',
  BACKFILL_LEASE_MS: '3000',
  BACKFILL_RETRY_BASE_MS: '300',
  BACKFILL_CHECKPOINT_EVERY: '50',
  IMAP_SYNC: '0',
};

let h: ImapHarness;
let big: Dovecot;
let dispatcher: RunningService;
let mailerId: string;
const workers: JobWorker[] = [];

beforeAll(async () => {
  h = await startHarness(ENV);
  big = await startDovecot({ user: USER, pass: PASS, messages: N });
  dispatcher = await startDispatcher(h.ctx);
  mailerId = await createImapMailer(h, '/big', big.host);
});

// Each test starts its own replicas and job; neither outlives it (a failed test leaves no active job behind).
afterEach(async () => {
  for (const w of workers.splice(0)) await w.stop();
  const active = await backfillJobs.active(h.ctx.db, h.tenantId, mailerId);
  if (active) await abortJob(h, mailerId, active);
});

afterAll(async () => {
  await dispatcher?.stop();
  await big?.stop();
  await h?.close();
});

/** A worker "replica" in this process (settings as the service reads them, with overrides). */
function replica(owner: string, over: Partial<BackfillSettings> = {}): JobWorker {
  const settings = { ...backfillSettings(h.config), ...over };
  const w = new JobWorker({
    db: h.ctx.db,
    bus: h.ctx.bus,
    logger: h.ctx.logger,
    settings,
    openMailbox: mailboxOpener(h.ctx.db, h.ctx.sealer, settings),
    owner,
  });
  w.start();
  workers.push(w);
  return w;
}

const startFullImport = async () => {
  const res = await startJob(h, mailerId, { window_start: rfc3339(ago(366 * DAY)) });
  expect(res.status).toBe(200);
  return res.body.jobId as string;
};

const processed = async (job: string) => (await status(h, mailerId, job)).body.processed as number;

/** Deliveries per Message-ID of `job`, once every one of the mailbox's N messages arrived. */
async function everyMessage(job: string): Promise<Map<string, number>> {
  return eventually(
    () => {
      const seen = new Map<string, number>();
      for (const r of jobMessages(h, job)) {
        const id = (r.json as { details: Record<string, string> }).details['message-id']!;
        seen.set(id, (seen.get(id) ?? 0) + 1);
      }
      return seen.size >= N ? seen : null;
    },
    `all ${N} messages of ${job}`,
    120_000,
  );
}

async function row(job: string) {
  const { rows } = await h.ctx.db.query<{
    status: string;
    lease_owner: string | null;
    attempts: number;
    checkpoint: { folders?: { inbox?: { uidValidity: string; done: string } } };
  }>('SELECT status, lease_owner, attempts, checkpoint FROM backfill_jobs WHERE id = $1', [job]);
  return rows[0]!;
}

it('abort mid-job: the worker lets go of the mailbox; what it delivered stays delivered', async () => {
  const a = replica('abort-a');
  const job = await startFullImport();
  await eventually(async () => (await processed(job)) > 0, 'first messages');
  const abort = await abortJob(h, mailerId, job);
  expect(abort.body).toEqual({ success: true, jobId: job, status: 'cancelled' });
  // The worker sees the abort at its next checkpoint and logs out of the mailbox.
  await eventually(async () => a.active === 0 && (await big.sessions()) === 0, 'the worker to let go');
  const after = (await status(h, mailerId, job)).body;
  expect(after).toMatchObject({ status: 'cancelled', endedAt: expect.any(String) });
  expect(after.processed).toBeLessThan(N);
  await eventually(() => jobMessages(h, job).length >= after.processed, 'the posted messages');
  expect(lifecycle(h, job).some((e) => e.event === 'HISTORY_BACKFILL_COMPLETED')).toBe(false);
  expect((await row(job)).status).toBe('cancelled');
  await a.stop();
});

it('a worker that stops hands its job back: another resumes it at once from the checkpoint', async () => {
  // A 10-minute lease: only the hand-back lets the second replica take the job within the test.
  const a = replica('stop-a', { leaseMs: 600_000 });
  const job = await startFullImport();
  await eventually(async () => (await processed(job)) >= 200, '200 messages');
  await a.stop();
  const handed = await row(job);
  expect(handed).toMatchObject({ status: 'processing', lease_owner: null });
  const atStop = await processed(job);
  expect(atStop).toBeLessThan(N);
  replica('stop-b', { leaseMs: 600_000 });
  const end = await finished(h, mailerId, job, 120_000);
  expect(end.status).toBe('done');
  expect(end.processed).toBeGreaterThanOrEqual(N);
  expect((await everyMessage(job)).size).toBe(N);
});

it('a worker process killed mid-job: its ops port answered; the job resumes and every message arrives', async () => {
  const { p: child, port } = await startOnFreePort(
    (opsPort) => spawnTs('services/imap-backfill/src/main.ts', { ...h.env, OPS_PORT: String(opsPort) }),
    /Mailyard imap-backfill started/,
  );
  try {
    const ops = (path: string) => fetch(`http://127.0.0.1:${port}${path}`);
    const health = await ops('/healthz');
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    const ready = await ops('/readyz');
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: 'ready', checks: { db: 'ok', bus: 'ok', kv: 'ok' } });

    const job = await startFullImport();
    await eventually(async () => (await processed(job)) >= 100, 'progress before the kill', 60_000);
    const metrics = await (await ops('/metrics')).text();
    const posted = Number(/^mailyard_backfill_messages_posted_total (\d+)/m.exec(metrics)?.[1]);
    expect(posted).toBeGreaterThanOrEqual(100);
    expect(metrics).toMatch(/^mailyard_process_resident_memory_bytes \d+/m);

    child.child.kill('SIGKILL');
    await child.exited;
    expect((await status(h, mailerId, job)).body.status).toBe('processing');
    replica('kill-b');
    const end = await finished(h, mailerId, job, 150_000);
    expect(end.status).toBe('done');
    expect((await everyMessage(job)).size).toBe(N);
  } finally {
    if (child.child.exitCode === null && child.child.signalCode === null) child.child.kill('SIGKILL');
  }
});

it('the IMAP server lost mid-job: retries with back-off, and the job resumes when it is back', async () => {
  // Small FETCH commands, so the job still needs the server when the pause lands: with 500 UIDs per
  // command a fast worker had streamed the whole mailbox before the server was down.
  replica('lost-a', { fetchBatch: 10 });
  const job = await startFullImport();
  await eventually(async () => (await processed(job)) >= 100, '100 messages');
  await big.pause();
  try {
    // Retried while the server is down (connection refused), the job still active.
    await eventually(async () => (await row(job)).attempts >= 2, 'two retries');
    const during = (await status(h, mailerId, job)).body;
    expect(during).toMatchObject({ status: 'processing', endedAt: '' });
  } finally {
    await big.resume();
  }
  const end = await finished(h, mailerId, job, 120_000);
  expect(end.status).toBe('done');
  expect((await everyMessage(job)).size).toBe(N);
  expect((await row(job)).attempts).toBe(0);
});

it('UIDVALIDITY changed while the job was stopped: the slice in progress starts over, nothing skipped', async () => {
  // One slice for the whole window, so the stop is always mid-slice.
  const oneSlice = { sliceMs: 400 * DAY };
  const a = replica('uidv-a', oneSlice);
  const job = await startFullImport();
  await eventually(async () => (await processed(job)) >= 100, '100 messages');
  await a.stop();
  const stopped = await row(job);
  const before = stopped.checkpoint.folders!.inbox!;
  expect(before.done).not.toBe('');
  const atStop = await processed(job);

  const renumbered = String(Number(before.uidValidity) + 1000);
  await big.doveadm('mailbox', 'update', '-u', USER, '--uid-validity', renumbered, 'INBOX');
  replica('uidv-b', oneSlice);
  const end = await finished(h, mailerId, job, 120_000);
  expect(end.status).toBe('done');
  // The UIDs handled before the change mean nothing now: the whole slice was posted again.
  expect(end.processed).toBe(atStop + N);
  const seen = await everyMessage(job);
  expect(seen.size).toBe(N);
  const twice = [...seen.values()].filter((n) => n >= 2).length;
  expect(twice).toBeGreaterThanOrEqual(atStop);
  const after = (await row(job)).checkpoint.folders!.inbox!;
  expect(after.uidValidity).toBe(renumbered);
});
