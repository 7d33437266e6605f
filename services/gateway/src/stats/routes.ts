/**
 * GET /v1/stats (docs/api/stats.md): the tenant's counts per UTC day or hour from the stats
 * rollups (libs/store stats.ts), every bucket of the range (zeros where nothing happened) and
 * their totals. Range and buckets: libs/contracts api/stats.ts.
 */
import { type StatsResponse, parseStatsQuery, statsBuckets, statsRange } from '@mailyard/contracts';
import { type Db, badRequest } from '@mailyard/platform';
import { stats } from '@mailyard/store';
import { Router } from 'express';
import { tenantOf } from '../auth/api-key-auth';

export function statsRoutes(db: Db): Router {
  const router = Router();

  router.get('/v1/stats', async (req, res) => {
    const parsed = parseStatsQuery(req.query);
    if (!parsed.success) throw badRequest(parsed.error);
    const q = parsed.data;
    const range = statsRange(q, Date.now());
    if (typeof range === 'string') throw badRequest(range);
    const found = await stats.buckets(db, {
      tenantId: tenantOf(res).tenantId,
      granularity: range.granularity,
      from: range.from,
      to: range.to,
      domain: q.domain,
      mailerId: q.mailer_id,
      campaignId: q.campaignId,
    });
    res.json({ success: true, ...statsBuckets(range, found) } satisfies StatsResponse);
  });

  return router;
}
