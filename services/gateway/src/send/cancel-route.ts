/**
 * POST /v1/email/send/{ref_id}/cancel (docs/api/send.md "Scheduled sends"): the
 * tenant's send is cancelled while it is still held for its `send_at` (libs/store
 * scheduled-sends.ts cancel: the held row and the log rows in one transaction, so a release at
 * the same moment and this cancel never both win). Answers `{success, message, cancelled}` with
 * the number of log entries (recipients of copies) now CANCELLED; 404 for a ref_id that is not
 * the tenant's send; 409 when nothing is left to cancel (released already, or cancelled).
 * Immediate sends are never held, so they answer 409: their commands are published within
 * milliseconds of the accept and no copy can be recalled from the send service without a claim
 * written per copy on the send path (docs/operations.md "Scheduled sends").
 */
import { type CancelSendResponse, ErrorText } from '@mailyard/contracts';
import { type Db, conflict, notFound } from '@mailyard/platform';
import { scheduledSends } from '@mailyard/store';
import { Router } from 'express';
import { tenantOf } from '../auth/api-key-auth';

export const CANCEL_SEND_PATH = '/v1/email/send/:ref_id/cancel';

/** Longest ref_id looked up: ours are 26-character ULIDs; anything longer is no send. */
const MAX_REF_ID_LENGTH = 64;

export function cancelSendRoutes(db: Db): Router {
  const router = Router();
  router.post(CANCEL_SEND_PATH, async (req, res) => {
    const refId = req.params.ref_id ?? '';
    if (refId.length > MAX_REF_ID_LENGTH) throw notFound(ErrorText.sendNotFound);
    const outcome = await scheduledSends.cancel(db, tenantOf(res).tenantId, refId);
    if (!outcome.found) throw notFound(ErrorText.sendNotFound);
    if (outcome.cancelled === 0) throw conflict(ErrorText.nothingToCancel);
    res.json({
      success: true,
      message: 'Send cancelled',
      cancelled: outcome.cancelled,
    } satisfies CancelSendResponse);
  });
  return router;
}
