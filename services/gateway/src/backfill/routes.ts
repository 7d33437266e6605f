/**
 * IMAP history backfill API (docs/api/backfill.md): start, status and abort, under
 * `/v1/imap/{mailerID}/history[...]` and the legacy aliases `/v1/{mailerID}/backfill[...]`.
 *
 * Eligibility (eligibility.ts) is checked before the body. One active job per mailer: a Redis
 * lock serializes starts for a mailer across gateway replicas, and the database's partial unique
 * index decides any race the lock cannot see (an expired lock, the embedded kv of another
 * process), so two active jobs can never exist; the loser gets 409 with the active `jobId`.
 */
import {
  type AbortBackfillResponse,
  BackfillErrorText,
  type BackfillStatusResponse,
  type StartBackfillResponse,
  StartBackfillSchema,
  planBackfill,
  ulid,
} from '@mailyard/contracts';
import {
  HttpError,
  type ServiceContext,
  acquireKvLease,
  conflict,
  notFound,
  parseOrThrow,
} from '@mailyard/platform';
import { type BackfillJob, backfillJobs } from '@mailyard/store';
import { type Request, type Response, Router } from 'express';
import { tenantOf } from '../auth/api-key-auth';
import type { GatewayContext } from '../settings';
import { assertBackfillEligible } from './eligibility';

const LOCK_TTL_MS = 10_000;

export function backfillRoutes(ctx: GatewayContext): Router {
  const { db, kv, config } = ctx;
  const router = Router();

  const start = async (req: Request, res: Response) => {
    const tenant = tenantOf(res);
    const mailerId = String(req.params.mailerID);
    await assertBackfillEligible(db, tenant.tenantId, mailerId);
    const body = parseOrThrow(StartBackfillSchema, req.body);
    const planned = planBackfill(body, new Date(), config.BACKFILL_MAX_COUNT);
    if (!planned.ok) throw new HttpError(400, planned.error);
    // kv unavailable: go on without the lock; the unique index still decides.
    const lease = await acquireKvLease(kv, `backfill:start:${mailerId}`, LOCK_TTL_MS).catch(() => null);
    try {
      const active = await backfillJobs.active(db, tenant.tenantId, mailerId);
      if (active) throw conflict(BackfillErrorText.active, { jobId: active });
      // Without the lock (another start holds it) the unique index still decides.
      const result = await backfillJobs.create(db, tenant.tenantId, mailerId, ulid(), planned.plan);
      if (!result.created) throw conflict(BackfillErrorText.active, { jobId: result.activeJobId });
      res.status(200).json({ success: true, jobId: result.jobId } satisfies StartBackfillResponse);
    } finally {
      if (lease) await lease.release().catch(() => false);
    }
  };

  const status = async (req: Request, res: Response) => {
    const job = await loadJob(req, res);
    res.json(toStatus(job));
  };

  const abort = async (req: Request, res: Response) => {
    const tenant = tenantOf(res);
    const r = await backfillJobs.abort(
      db,
      tenant.tenantId,
      String(req.params.mailerID),
      String(req.params.jobId),
    );
    if (!r) throw notFound(BackfillErrorText.jobNotFound);
    if (!r.changed) throw conflict(BackfillErrorText.finished, { jobId: req.params.jobId, status: r.status });
    res.json({
      success: true,
      jobId: String(req.params.jobId),
      status: 'cancelled',
    } satisfies AbortBackfillResponse);
  };

  const loadJob = async (req: Request, res: Response): Promise<BackfillJob> => {
    const tenant = tenantOf(res);
    const job = await backfillJobs.get(
      db,
      tenant.tenantId,
      String(req.params.mailerID),
      String(req.params.jobId),
    );
    if (!job) throw notFound(BackfillErrorText.jobNotFound);
    return job;
  };

  for (const base of ['/v1/imap/:mailerID/history', '/v1/:mailerID/backfill']) {
    router.post(base, start);
    router.get(`${base}/:jobId`, status);
    router.post(`${base}/:jobId/abort`, abort);
  }
  return router;
}

export function toStatus(job: BackfillJob): BackfillStatusResponse {
  return {
    success: true,
    jobId: job.id,
    status: job.status,
    processed: job.processed,
    target: job.count,
    percent: job.status === 'done' ? 100 : Math.max(0, Math.min(100, job.percent)),
    startedAt: job.startedAt.toISOString(),
    endedAt: job.endedAt ? job.endedAt.toISOString() : '',
    ...(job.status === 'failed' ? { failedReason: job.failedReason } : {}),
  };
}
