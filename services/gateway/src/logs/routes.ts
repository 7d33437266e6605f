import {
  ErrorText,
  type ListLogsResponse,
  MESSAGE_EVENTS_LIMIT,
  type MessageEventsResponse,
} from '@mailyard/contracts';
import { parseLogsQuery } from '@mailyard/contracts';
import { type Db, badRequest, notFound } from '@mailyard/platform';
import { emailLogs, emailTimeline } from '@mailyard/store';
import { Router } from 'express';
import { tenantOf } from '../auth/api-key-auth';
import { readPage } from '../paging/read-page';

/**
 * GET /v1/email/logs: the tenant's log, newest first, filtered, cursor-paged with totalCount.
 * GET /v1/email/logs/{refId}/events: one send's events, oldest first (its timeline); a ref_id
 * the tenant never sent (or another tenant's) is 404.
 */
export function logRoutes(db: Db): Router {
  const router = Router();

  router.get('/v1/email/logs', async (req, res) => {
    const parsed = parseLogsQuery(req.query);
    if (!parsed.success) throw badRequest(parsed.error);
    const page = await readPage(() => emailLogs.list(db, tenantOf(res).tenantId, parsed.data));
    res.json({
      success: true,
      data: page.items,
      nextPageToken: page.nextCursor,
      totalCount: page.totalCount,
    } satisfies ListLogsResponse);
  });

  router.get('/v1/email/logs/:refId/events', async (req, res) => {
    const refId = req.params.refId!;
    if (refId.length > 64) throw notFound(ErrorText.messageNotFound);
    const t = await emailTimeline(db, tenantOf(res).tenantId, refId, MESSAGE_EVENTS_LIMIT);
    if (!t.exists) throw notFound(ErrorText.messageNotFound);
    res.json({ success: true, data: t.events, truncated: t.truncated } satisfies MessageEventsResponse);
  });

  return router;
}
