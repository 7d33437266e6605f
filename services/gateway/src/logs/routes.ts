import { type ListLogsResponse, parseLogsQuery } from '@mailyard/contracts';
import { type Db, badRequest } from '@mailyard/platform';
import { emailLogs } from '@mailyard/store';
import { Router } from 'express';
import { tenantOf } from '../auth/api-key-auth';
import { readPage } from '../paging/read-page';

/** GET /v1/email/logs: the tenant's log, newest first, filtered, cursor-paged with totalCount. */
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

  return router;
}
