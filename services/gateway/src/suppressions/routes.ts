/**
 * The tenant's suppression list (docs/api/suppressions.md), all through libs/store suppressions.ts:
 * - GET /v1/suppressions?email&reason&pageSize&pageToken: newest first, `email` a
 *   case-insensitive substring, cursor-paged with totalCount;
 * - GET /v1/suppressions/{email}: one entry, 404 when not suppressed;
 * - POST /v1/suppressions `{emails: [1..1000], reason?}`: `{added, existing}` in one round trip;
 * - DELETE /v1/suppressions/{email}: the address can be sent to again; 404 when not suppressed;
 * - POST /v1/email/unsubscribe and /v1/email/subscribe `{email}`: add (reason `unsubscribe`) or
 *   lift a suppression; both idempotent, 200 either way.
 * `{email}` in a path is URL-encoded (`jane%2Bnews%40example.com`; a literal `+` stays `+`) and
 * compared by its key (lowercase, ASCII domain). Another tenant's suppression reads as 404.
 */
import {
  type AddSuppressionsResponse,
  ErrorText,
  type GetSuppressionResponse,
  type ListSuppressionsResponse,
  SuppressionErrorText,
  SuppressionRequestSchema,
  type SuppressionResponse,
  parseAddSuppressions,
  parseSuppressionsQuery,
  suppressionKey,
} from '@mailyard/contracts';
import { type Db, badRequest, notFound, parseOrThrow } from '@mailyard/platform';
import { suppressions } from '@mailyard/store';
import { type Request, Router } from 'express';
import { tenantOf } from '../auth/api-key-auth';
import { readPage } from '../paging/read-page';

/** The `{email}` path parameter as its key; 400 when it is not an address. */
function emailParam(req: Request): string {
  const key = suppressionKey(String(req.params.email ?? ''));
  if (!key) throw badRequest(ErrorText.invalidEmail);
  return key;
}

export function suppressionRoutes(db: Db): Router {
  const router = Router();

  router.get('/v1/suppressions', async (req, res) => {
    const parsed = parseSuppressionsQuery(req.query);
    if (!parsed.success) throw badRequest(parsed.error);
    const page = await readPage(() => suppressions.list(db, tenantOf(res).tenantId, parsed.data));
    res.json({
      success: true,
      data: page.items,
      nextPageToken: page.nextCursor,
      totalCount: page.totalCount,
    } satisfies ListSuppressionsResponse);
  });

  router.get('/v1/suppressions/:email', async (req, res) => {
    const entry = await suppressions.get(db, tenantOf(res).tenantId, emailParam(req));
    if (!entry) throw notFound(SuppressionErrorText.notFound);
    res.json({ success: true, data: entry } satisfies GetSuppressionResponse);
  });

  router.post('/v1/suppressions', async (req, res) => {
    const parsed = parseAddSuppressions(req.body);
    if (!parsed.success) throw badRequest(parsed.error);
    const { emails, reason } = parsed.data;
    const counts = await suppressions.addMany(db, tenantOf(res).tenantId, emails, reason);
    res.json({ success: true, ...counts } satisfies AddSuppressionsResponse);
  });

  router.delete('/v1/suppressions/:email', async (req, res) => {
    const email = emailParam(req);
    if (!(await suppressions.remove(db, tenantOf(res).tenantId, email)))
      throw notFound(SuppressionErrorText.notFound);
    res.json({
      success: true,
      message: `${email} removed from the suppression list`,
    } satisfies SuppressionResponse);
  });

  router.post('/v1/email/unsubscribe', async (req, res) => {
    const { email } = parseOrThrow(SuppressionRequestSchema, req.body);
    await suppressions.add(db, tenantOf(res).tenantId, email, 'unsubscribe');
    res.json({ success: true, message: `${email} unsubscribed` } satisfies SuppressionResponse);
  });

  router.post('/v1/email/subscribe', async (req, res) => {
    const { email } = parseOrThrow(SuppressionRequestSchema, req.body);
    await suppressions.remove(db, tenantOf(res).tenantId, email);
    res.json({ success: true, message: `${email} subscribed` } satisfies SuppressionResponse);
  });

  return router;
}
