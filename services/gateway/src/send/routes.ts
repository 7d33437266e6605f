import { type SendResponse, parseSendRequest } from '@mailyard/contracts';
import { badRequest } from '@mailyard/platform';
import { Router } from 'express';
import { tenantOf } from '../auth/api-key-auth';
import { type SendDeps, acceptSend } from './accept-send';
import { SendGroupCommit } from './group-commit';
import { idempotencyKeyOf } from './idempotency';

/** POST /v1/email/send: validate, accept durably, answer `{success, ref_id, message: "queued"}`. */
export function sendRoutes(deps: SendDeps): Router {
  const router = Router();
  const accept = { ...deps, group: deps.group ?? new SendGroupCommit(deps.db) };

  router.post('/v1/email/send', async (req, res) => {
    const { tenantId } = tenantOf(res);
    const key = idempotencyKeyOf(req);
    const parsed = parseSendRequest(req.body);
    if (!parsed.success) throw badRequest(parsed.error, parsed.details);
    const result = await acceptSend(accept, tenantId, parsed.data, key);
    if (result.replayed) res.setHeader('Idempotent-Replayed', 'true');
    res.json({ success: true, ref_id: result.refId, message: 'queued' } satisfies SendResponse);
  });

  return router;
}
