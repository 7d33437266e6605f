/**
 * Runs one claimed backfill job to its end (or until it is cancelled, or its lease is lost):
 *
 *   resolve folders (special-use) -> STARTED -> for each time slice, newest first:
 *     abort check (lease renewal) -> list every selected folder (exact window, participant)
 *     -> newest first, capped by what `count` leaves -> stream the sources folder by folder
 *     -> post each as INCOMING_EMAIL (X-History-Backfill-Job-Id) -> checkpoint every batch
 *     -> PROGRESS at every new 10% -> COMPLETED.
 *
 * Provider-independent: everything mailbox-specific is behind MailboxClient. Errors propagate
 * to the caller (job-worker.ts), which decides retry, deactivation or failure.
 */
import { type Bus, type Logger, type Queryable, isServiceSent } from '@mailyard/platform';
import { type BackfillJob, backfillJobs } from '@mailyard/store';
import { imapIncomingEmail } from '../incoming-email';
import {
  FOLDER_ROLES,
  type FolderRole,
  type MailboxClient,
  type MessageRef,
} from '../mailbox/mailbox-client';
import { BACKFILL_JOB_HEADER, lifecycleEvent, postLifecycle, postToMailer } from '../publish';
import { type JobCheckpoint, readCheckpoint } from './checkpoint';
import { newestFirst, nextUntil, progressStep, sliceEndingAt, windowPercent } from './slices';

export interface RunJobDeps {
  db: Queryable;
  bus: Bus;
  logger: Logger;
  owner: string;
  leaseMs: number;
  sliceMs: number;
  checkpointEvery: number;
}

export type RunOutcome = 'done' | 'stopped';

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
      checkpoint: cp as unknown as Record<string, unknown>,
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
  while (until && !capped() && until.getTime() >= lower.getTime()) {
    if (!(await backfillJobs.renew(db, job.id, owner, deps.leaseMs))) return 'stopped';
    const slice = sliceEndingAt(until, lower, deps.sliceMs);
    const found: Array<MessageRef & { role: FolderRole; path: string }> = [];
    for (const role of roles) {
      const state = await mailbox.openFolder(paths[role]!);
      const prev = cp.folders[role];
      if (!prev || prev.uidValidity !== state.uidValidity)
        cp.folders[role] = { uidValidity: state.uidValidity, delivered: [] };
      const done = new Set(cp.folders[role]!.delivered);
      for (const ref of await mailbox.list({
        since: slice.since,
        until: slice.until,
        participant: job.participant,
      }))
        if (!done.has(ref.uid)) found.push({ ...ref, role, path: state.path });
    }
    const left = job.count > 0 ? job.count - processed : Number.POSITIVE_INFINITY;
    const chosen = newestFirst(found).slice(0, left);
    // Posts are pipelined: the broker confirms them in the background and every checkpoint
    // waits for the confirms of what it records, so a checkpoint never runs ahead of the bus.
    let inFlight: Array<Promise<void>> = [];
    const confirmAndSave = async () => {
      const waiting = inFlight;
      inFlight = [];
      await Promise.all(waiting);
      return save();
    };
    for (const role of roles) {
      const uids = chosen.filter((c) => c.role === role).map((c) => c.uid);
      if (uids.length === 0) continue;
      const state = await mailbox.openFolder(paths[role]!);
      for await (const msg of mailbox.fetch(uids)) {
        if (!(role === 'sent' && isServiceSent(msg.source))) {
          const body = await imapIncomingEmail(msg.source, {
            mailerId: job.mailerId,
            email: mailer.email,
            folder: state.path,
          });
          const posting = postToMailer(bus, job.tenantId, {
            mailer_id: job.mailerId,
            event: 'INCOMING_EMAIL',
            body,
            headers: { [BACKFILL_JOB_HEADER]: job.id },
          });
          posting.catch(() => {}); // awaited (and its error thrown) by the next checkpoint
          inFlight.push(posting);
          processed++;
        }
        cp.folders[role]!.delivered.push(msg.uid);
        if (inFlight.length >= deps.checkpointEvery && !(await confirmAndSave())) return 'stopped';
      }
    }
    if (inFlight.length > 0 && !(await confirmAndSave())) return 'stopped';
    until = nextUntil(slice, lower);
    cp.until = until ? until.toISOString() : new Date(lower.getTime() - 1000).toISOString();
    for (const role of roles) cp.folders[role]!.delivered = [];
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
