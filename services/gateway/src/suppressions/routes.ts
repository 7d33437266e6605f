import { SuppressionRequestSchema, type SuppressionResponse } from '@mailyard/contracts';
import { type Db, parseOrThrow } from '@mailyard/platform';
import { suppressions } from '@mailyard/store';
import { Router } from 'express';
import { tenantOf } from '../auth/api-key-auth';

/**
 * POST /v1/email/unsubscribe and /v1/email/subscribe `{email}`: add or lift the tenant's
 * suppression of an address. Both are idempotent and answer 200 either way.
 */
export function suppressionRoutes(db: Db): Router {
  const router = Router();

  router.post('/v1/email/unsubscribe', async (req, res) => {
    const { email } = parseOrThrow(SuppressionRequestSchema, req.body);
    await suppressions.add(db, tenantOf(res).tenantId, email);
    res.json({ success: true, message: `${email} unsubscribed` } satisfies SuppressionResponse);
  });

  router.post('/v1/email/subscribe', async (req, res) => {
    const { email } = parseOrThrow(SuppressionRequestSchema, req.body);
    await suppressions.remove(db, tenantOf(res).tenantId, email);
    res.json({ success: true, message: `${email} subscribed` } satisfies SuppressionResponse);
  });

  return router;
}
