/**
 * Claims due backfill jobs (libs/store backfillJobs: a lease per job, FOR UPDATE SKIP LOCKED)
 * and runs up to `concurrency` at once, one mailbox connection each. What a failure does:
 * - authentication rejected: the mailer is deactivated (MAILER_DEACTIVATED,
 *   `provider_auth_error`, to its own webhook) and the job fails; a revoked OAuth grant was
 *   already deactivated by the token layer (`oauth_revoked`): the job just fails;
 * - transient (connection lost, timeout, provider busy): the job is released and due again after
 *   a back-off (at least the provider's Retry-After), resuming from its checkpoint; after
 *   `retryMax` failures in a row it fails;
 * - anything else: the job fails with the reason, shown in the status response.
 * Failed jobs send HISTORY_BACKFILL_FAILED. The spec's state table has no `pending -> failed`:
 * a job that fails before its first slice (mailer gone, disabled or deactivated, authentication
 * rejected, connection given up) is moved to `processing` and sends HISTORY_BACKFILL_STARTED
 * first, so every failed job went pending -> processing -> failed and its receiver saw STARTED
 * before FAILED (a job whose STARTED was already sent, checkpoint `started`, sends FAILED only).
 * A worker that stops (SIGTERM) checkpoints its jobs
 * and releases their leases, so another worker resumes them at once; a worker killed mid-job
 * leaves its lease to expire, then any worker resumes the job from its checkpoint.
 */
import type { Bus, Logger, Queryable } from '@mailyard/platform';
import { type Db, MAILBOX_RETRY_MAX_MS, backoffOrAsked, keepLeaseAlive } from '@mailyard/platform';
import { type BackfillJob, backfillJobs, deactivateMailer, mailers } from '@mailyard/store';
import { MailboxError } from '../mailbox/mailbox-client';
import { backfillJobsEnded } from '../metrics';
import type { OpenMailbox } from '../open-mailbox';
import { lifecycleEvent, postLifecycle } from '../publish';
import type { BackfillSettings } from '../settings';
import { readCheckpoint } from './checkpoint';
import { type RunOutcome, runJob } from './run-job';

export interface JobWorkerDeps {
  db: Db;
  bus: Bus;
  logger: Logger;
  settings: BackfillSettings;
  openMailbox: OpenMailbox;
  owner: string;
}

export class JobWorker {
  private readonly running = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private claiming = false;
  /** Aborted by stop(): running jobs checkpoint and hand their leases back. */
  private readonly stopping = new AbortController();

  constructor(private readonly deps: JobWorkerDeps) {}

  start(): void {
    const tick = () => {
      if (this.stopped) return;
      void this.fill();
      this.timer = setTimeout(tick, this.deps.settings.pollMs);
    };
    tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.stopping.abort();
    if (this.timer) clearTimeout(this.timer);
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  get active(): number {
    return this.running.size;
  }

  private async fill(): Promise<void> {
    if (this.claiming) return;
    this.claiming = true;
    try {
      while (!this.stopped && this.running.size < this.deps.settings.concurrency) {
        const job = await backfillJobs.claim(this.deps.db, this.deps.owner, this.deps.settings.leaseMs);
        if (!job) break;
        const run = this.run(job).finally(() => {
          this.running.delete(run);
          if (!this.stopped) void this.fill();
        });
        this.running.add(run);
      }
    } catch (err) {
      this.deps.logger.warn('claiming backfill jobs failed', { error: (err as Error).message });
    } finally {
      this.claiming = false;
    }
  }

  private async run(job: BackfillJob): Promise<void> {
    const { db, logger, settings, owner } = this.deps;
    // The lease is renewed at every slice and batch; this keeps it alive through long fetches.
    const lease = backfillJobs.lease(db, job.id, owner, settings.leaseMs);
    const stopRenewing = keepLeaseAlive(lease, { floorMs: 1000 });
    try {
      const mailer = await mailers.get(db, job.tenantId, job.mailerId);
      if (!mailer) return await this.fail(job, 'the mailer was deleted');
      if (mailer.state !== 'active') return await this.fail(job, `the mailer is ${mailer.state}`);
      const mailbox = await this.deps.openMailbox(mailer);
      let outcome: RunOutcome;
      try {
        outcome = await runJob(
          {
            db,
            bus: this.deps.bus,
            logger,
            owner,
            lease,
            sliceMs: settings.sliceMs,
            sliceTarget: settings.sliceTarget,
            checkpointEvery: settings.checkpointEvery,
            inFlight: settings.inFlight,
            inFlightBytes: settings.inFlightBytes,
            maxMessageBytes: settings.maxMessageBytes,
            signal: this.stopping.signal,
          },
          job,
          mailbox,
          mailer,
        );
      } finally {
        await mailbox.close();
      }
      if (outcome === 'stopped' && this.stopped && (await lease.release()))
        logger.info('history backfill handed back at shutdown', { job_id: job.id });
    } catch (err) {
      await this.onError(job, err).catch((e) =>
        logger.error('backfill job error handling failed', { job_id: job.id, err: e }),
      );
    } finally {
      stopRenewing();
    }
  }

  private async onError(job: BackfillJob, err: unknown): Promise<void> {
    const { db, logger, settings, owner } = this.deps;
    const kind = err instanceof MailboxError ? err.kind : 'transient-db';
    const message = err instanceof Error ? err.message : String(err);
    if (err instanceof MailboxError && kind === 'auth') {
      if (err.deactivation) await deactivateMailer(db, job.tenantId, job.mailerId, err.deactivation, message);
      return this.fail(job, `${err.source} authentication failed: ${message}`);
    }
    if (kind === 'terminal') return this.fail(job, message);
    // Transient mailbox errors, and unexpected ones (database, bus) the same way: retry from the checkpoint.
    if (job.attempts + 1 > settings.retryMax)
      return this.fail(job, `gave up after ${job.attempts + 1} attempts: ${message}`);
    const delay = backoffOrAsked(
      job.attempts,
      { minMs: settings.retryBaseMs, maxMs: MAILBOX_RETRY_MAX_MS, maxDoublings: 10 },
      err instanceof MailboxError ? err.retryAfterMs : null,
    );
    const attempts = await backfillJobs.retryLater(db, job.id, owner, delay);
    logger.warn('history backfill will retry', { job_id: job.id, attempts, delay_ms: delay, error: message });
  }

  private async fail(job: BackfillJob, reason: string): Promise<void> {
    const { db, bus, logger, owner } = this.deps;
    if (!(await this.started(job))) return;
    if (!(await backfillJobs.finish(db, job.id, owner, { status: 'failed', reason }))) return;
    backfillJobsEnded.inc({ status: 'failed' });
    const now = await backfillJobs.progress(db, job.id);
    await postLifecycle(
      bus,
      job.tenantId,
      lifecycleEvent('HISTORY_BACKFILL_FAILED', job, {
        status: 'failed',
        processed: now.processed,
        percent: now.percent,
        endedAt: new Date(),
        failedReason: reason,
      }),
    );
    logger.info('history backfill failed', { job_id: job.id, mailer_id: job.mailerId, reason });
  }

  /**
   * Before a failure: a job whose STARTED was not sent yet (read now, run-job.ts may have sent it
   * since the claim) moves to `processing` and sends it. False when the job is no longer ours
   * (cancelled, lease lost): nothing more is sent.
   */
  private async started(job: BackfillJob): Promise<boolean> {
    const { db, bus, owner } = this.deps;
    const now = await backfillJobs.get(db, job.tenantId, job.mailerId, job.id);
    if (!now) return false;
    if (readCheckpoint(now.checkpoint).started) return true;
    if (!(await backfillJobs.markProcessing(db, job.id, owner))) return false;
    await postLifecycle(
      bus,
      job.tenantId,
      lifecycleEvent('HISTORY_BACKFILL_STARTED', now, {
        status: 'processing',
        processed: now.processed,
        percent: 0,
      }),
    );
    return true;
  }
}
