/**
 * Runs one claimed backfill job to its end (or until it is cancelled, its lease is lost, or the
 * worker stops):
 *
 *   resolve folders (special-use) -> STARTED -> for each time slice (slices.ts), newest first:
 *     abort check (lease renewal) -> list every selected folder (exact window, participant)
 *     -> newest first, capped by what `count` leaves -> stream the sources folder by folder
 *     through a PostPipeline (INCOMING_EMAIL with X-History-Backfill-Job-Id, checkpoint every
 *     `checkpointEvery`) -> PROGRESS at every new 10% -> COMPLETED.
 *
 * The service's own sent mail (X-Is-Svc in SENT) is skipped; when skipped messages took places
 * of the `count` cap, the same slice is walked again for the next newest. The cap is also
 * checked as messages stream in: no more than it leaves are handed on, whatever the mailbox
 * sends. A message over `maxMessageBytes` is posted as the error form (mailbox/too-large.ts). A folder whose
 * UIDVALIDITY changed since the checkpoint forgets the slice's handled ids (delivered again,
 * nothing skipped); a change between listing and fetching is a transient error (retried). Where
 * ids name a message in the whole mailbox (Gmail: one message, several folder labels), a message
 * is posted once per job, for the first selected folder it is in.
 *
 * Provider-independent: everything mailbox-specific is behind MailboxClient. Errors propagate
 * to the caller (job-worker.ts), which decides retry, deactivation or failure.
 */
import { type Bus, type Lease, type Logger, type Queryable, isServiceSent } from '@mailyard/platform';
import { type BackfillJob, backfillJobs } from '@mailyard/store';
import { mailboxIncomingEmail } from '../incoming-email';
import {
  FOLDER_ROLES,
  type FolderRole,
  type MailboxClient,
  MailboxError,
  type MessageRef,
} from '../mailbox/mailbox-client';
import { backfillJobsEnded, backfillPosted } from '../metrics';
import { BACKFILL_JOB_HEADER, lifecycleEvent, postLifecycle, postToMailer } from '../publish';
import { type JobCheckpoint, readCheckpoint, writeCheckpoint } from './checkpoint';
import { PostPipeline } from './post-pipeline';
import {
  type Slice,
  maxSliceMs,
  newestFirst,
  nextSliceMs,
  nextUntil,
  progressStep,
  sliceEndingAt,
  windowPercent,
} from './slices';

export interface RunJobDeps {
  db: Queryable;
  bus: Bus;
  logger: Logger;
  owner: string;
  /** The job's lease, renewed at every slice: a lost lease stops the run. */
  lease: Lease;
  /** First (and shortest) slice length; slices adapt towards `sliceTarget` messages. */
  sliceMs: number;
  sliceTarget: number;
  /** Messages between checkpoints. */
  checkpointEvery: number;
  /** Messages parsed and posted at once. */
  inFlight: number;
  /** Source bytes between fetch and broker confirm. */
  inFlightBytes: number;
  /** Larger messages are posted as the error form (mailbox/too-large.ts). */
  maxMessageBytes: number;
  /** Aborted when the worker stops: the job checkpoints and returns 'stopped'. */
  signal?: AbortSignal;
}

export type RunOutcome = 'done' | 'stopped';

type Found = MessageRef & { role: FolderRole };

export async function runJob(
  deps: RunJobDeps,
  job: BackfillJob,
  mailbox: MailboxClient,
  mailer: { email: string },
): Promise<RunOutcome> {
  const { db, bus, owner } = deps;
  const cp: JobCheckpoint = readCheckpoint(job.checkpoint);
  let processed = job.processed;
  const paths = await mailbox.resolveFolders();
  const roles = FOLDER_ROLES.filter((r) => job.folders[r] && paths[r]);
  const end = job.windowEnd;

  if (!cp.lower) cp.lower = (job.windowStart ?? (await oldestOf(mailbox, roles, paths)) ?? end).toISOString();
  const lower = new Date(Math.floor(Date.parse(cp.lower) / 1000) * 1000);
  if (!(await backfillJobs.markProcessing(db, job.id, owner))) return 'stopped';
  const save = () =>
    backfillJobs.checkpoint(db, job.id, owner, {
      processed,
      percent: cp.until ? windowPercent(lower, end, new Date(Date.parse(cp.until) + 1000)) : 100,
      checkpoint: writeCheckpoint(cp),
    });
  if (!cp.started) {
    await postLifecycle(
      bus,
      job.tenantId,
      lifecycleEvent('HISTORY_BACKFILL_STARTED', job, { status: 'processing', processed, percent: 0 }),
    );
    cp.started = true;
    cp.until = cp.until ?? end.toISOString();
    if (!(await save())) return 'stopped';
  }

  const capped = () => job.count > 0 && processed >= job.count;
  let until: Date | null = cp.until ? new Date(cp.until) : end;
  const sliceBounds = {
    minMs: deps.sliceMs,
    maxMs: maxSliceMs(lower, end, deps.sliceMs),
    target: deps.sliceTarget,
  };
  let sliceMs = deps.sliceMs;
  while (until && !capped() && until.getTime() >= lower.getTime()) {
    if (deps.signal?.aborted) return 'stopped';
    if (!(await deps.lease.renew())) return 'stopped';
    const slice = sliceEndingAt(until, lower, sliceMs);
    const found = await listSlice(mailbox, roles, paths, cp, slice, job.participant);
    const left = job.count > 0 ? job.count - processed : Number.POSITIVE_INFINITY;
    const chosen = newestFirst(found).slice(0, left);
    let handled = 0;
    // Messages handed on in this slice: the cap holds even if a mailbox sends more than asked.
    let taken = 0;
    for (const role of roles) {
      const refs = chosen.filter((c) => c.role === role);
      if (refs.length === 0) continue;
      const state = await mailbox.openFolder(paths[role]!);
      const folder = cp.folders[role]!;
      if (state.uidValidity !== folder.uidValidity)
        throw new MailboxError('transient', `UIDVALIDITY of ${state.path} changed during the backfill`);
      const pipeline = new PostPipeline({
        inFlight: deps.inFlight,
        inFlightBytes: deps.inFlightBytes,
        checkpointEvery: deps.checkpointEvery,
        build: async (msg) =>
          role === 'sent' && isServiceSent(msg.source)
            ? null
            : mailboxIncomingEmail(msg, {
                mailerId: job.mailerId,
                email: mailer.email,
                service: mailbox.service,
                folder: state.path,
                maxBytes: deps.maxMessageBytes,
              }),
        post: (body) =>
          postToMailer(bus, job.tenantId, {
            mailer_id: job.mailerId,
            event: 'INCOMING_EMAIL',
            body,
            headers: { [BACKFILL_JOB_HEADER]: job.id },
          }),
        save: (done, posted) => {
          for (const id of done) folder.delivered.add(id);
          handled += done.length;
          processed += posted;
          backfillPosted.inc(posted);
          return save();
        },
      });
      for await (const msg of mailbox.fetch(refs)) {
        await pipeline.add(msg);
        taken++;
        if (pipeline.stopped || deps.signal?.aborted || taken >= left) break;
      }
      await pipeline.drain();
      if (pipeline.stopped || deps.signal?.aborted) return 'stopped';
    }
    // Skipped messages (the service's own sent mail) took places of the cap: same slice again.
    if (!capped() && chosen.length < found.length && handled > 0) continue;
    until = nextUntil(slice, lower);
    sliceMs = nextSliceMs(sliceMs, found.length, sliceBounds);
    cp.until = until ? until.toISOString() : new Date(lower.getTime() - 1000).toISOString();
    for (const role of roles) cp.folders[role]!.delivered.clear();
    const percent = until ? windowPercent(lower, end, slice.since) : 100;
    if (!(await save())) return 'stopped';
    if (progressStep(percent) > cp.step && percent < 100 && !capped()) {
      cp.step = progressStep(percent);
      await postLifecycle(
        bus,
        job.tenantId,
        lifecycleEvent('HISTORY_BACKFILL_PROGRESS', job, { status: 'processing', processed, percent }),
      );
      if (!(await save())) return 'stopped';
    }
  }
  if (!(await backfillJobs.finish(db, job.id, owner, { status: 'done' }))) return 'stopped';
  backfillJobsEnded.inc({ status: 'done' });
  await postLifecycle(
    bus,
    job.tenantId,
    lifecycleEvent('HISTORY_BACKFILL_COMPLETED', job, {
      status: 'done',
      processed,
      percent: 100,
      endedAt: new Date(),
    }),
  );
  deps.logger.info('history backfill done', { job_id: job.id, mailer_id: job.mailerId, processed });
  return 'done';
}

/**
 * Messages of the slice in every selected folder not handled yet. A folder whose UIDVALIDITY
 * differs from the checkpoint's starts the slice over. With mailbox-wide ids, a message listed
 * in an earlier folder is left out of the later ones.
 */
async function listSlice(
  mailbox: MailboxClient,
  roles: FolderRole[],
  paths: Record<FolderRole, string | null>,
  cp: JobCheckpoint,
  slice: Slice,
  participant: string | null,
): Promise<Found[]> {
  const found: Found[] = [];
  const listed = new Set<string>();
  for (const role of roles) {
    const state = await mailbox.openFolder(paths[role]!);
    const prev = cp.folders[role];
    if (!prev || prev.uidValidity !== state.uidValidity)
      cp.folders[role] = { uidValidity: state.uidValidity, delivered: new Set() };
    const done = cp.folders[role]!.delivered;
    for (const ref of await mailbox.list({ since: slice.since, until: slice.until, participant })) {
      if (mailbox.idScope === 'mailbox') {
        if (listed.has(ref.id)) continue;
        listed.add(ref.id);
      }
      if (!done.has(ref.id)) found.push({ ...ref, role });
    }
  }
  return found;
}

async function oldestOf(
  mailbox: MailboxClient,
  roles: FolderRole[],
  paths: Record<FolderRole, string | null>,
): Promise<Date | null> {
  let min: Date | null = null;
  for (const role of roles) {
    await mailbox.openFolder(paths[role]!);
    const d = await mailbox.oldest();
    if (d && (!min || d < min)) min = d;
  }
  return min;
}
