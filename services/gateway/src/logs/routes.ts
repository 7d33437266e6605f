import { ErrorText, type ListLogsResponse, parseLogsQuery } from '@mailyard/contracts';
import { type Db, badRequest } from '@mailyard/platform';
import { InvalidCursorError, emailLogs } from '@mailyard/store';
import { Router } from 'express';
import { tenantOf } from '../auth/api-key-auth';

/** GET /v1/email/logs: the tenant's log, newest first, filtered, cursor-paged with totalCount. */
export function logRoutes(db: Db): Router {
  const router = Router();

  router.get('/v1/email/logs', async (req, res) => {
    const parsed = parseLogsQuery(req.query);
    if (!parsed.success) throw badRequest(parsed.error);
    try {
      const page = await emailLogs.list(db, tenantOf(res).tenantId, parsed.data);
      res.json({
        success: true,
        data: page.items,
        nextPageToken: page.nextCursor,
        totalCount: page.totalCount,
      } satisfies ListLogsResponse);
    } catch (err) {
      if (err instanceof InvalidCursorError) throw badRequest(ErrorText.invalidPageToken);
      throw err;
    }
  });

  return router;
}
