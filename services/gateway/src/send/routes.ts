import { type SendResponse, parseSendRequest } from '@mailyard/contracts';
import { type HttpRequest, type HttpResponse, badRequest } from '@mailyard/platform';
import { tenantOf } from '../auth/api-key-auth';
import { type SendDeps, acceptSend } from './accept-send';
import { SendGroupCommit } from './group-commit';
import { idempotencyKeyOf } from './idempotency';

export const SEND_PATH = '/v1/email/send';

/**
 * POST /v1/email/send: validate, accept durably, answer `{success, ref_id, message: "queued"}`
 * (`"scheduled"` when its `send_at` is ahead).
 * The handler resolves with the 200 body; the route's runner (app.ts fastRoutes, platform
 * fast-route.ts) writes it as JSON.
 */
export function sendHandler(deps: SendDeps) {
  const group = deps.group ?? new SendGroupCommit(deps.db);
  const accept = { ...deps, group };
  return async (req: HttpRequest, res: HttpResponse): Promise<SendResponse> => {
    const { tenantId } = tenantOf(res);
    const key = idempotencyKeyOf(req);
    const parsed = parseSendRequest(req.body);
    if (!parsed.success) throw badRequest(parsed.error, parsed.details);
    const result = await acceptSend(accept, tenantId, parsed.data, key);
    if (result.replayed) res.setHeader('Idempotent-Replayed', 'true');
    return { success: true, ref_id: result.refId, message: result.scheduled ? 'scheduled' : 'queued' };
  };
}
