import { type ListAuditResponse, parseAuditQuery } from '@mailyard/contracts';
import { type Db, badRequest } from '@mailyard/platform';
import { auditLog } from '@mailyard/store';
import { Router } from 'express';
import { tenantOf } from '../auth/api-key-auth';
import { readPage } from '../paging/read-page';

/** GET /v1/audit (docs/api/audit.md): the tenant's audit entries, newest first, filtered, cursor-paged. */
export function auditRoutes(db: Db): Router {
  const router = Router();

  router.get('/v1/audit', async (req, res) => {
    const parsed = parseAuditQuery(req.query);
    if (!parsed.success) throw badRequest(parsed.error);
    const page = await readPage(() => auditLog.list(db, tenantOf(res).tenantId, parsed.data));
    res.json({ success: true, data: page.items, nextPageToken: page.nextCursor } satisfies ListAuditResponse);
  });

  return router;
}
