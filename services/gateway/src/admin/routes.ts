import {
  AdminIssueKeySchema,
  type CreateKeyResponse,
  type CreateTenantResponse,
  CreateTenantSchema,
  ErrorText,
} from '@mailyard/contracts';
import { type Db, notFound, parseOrThrow } from '@mailyard/platform';
import { createTenant, issueKey, revokeKey } from '@mailyard/store';
import { Router } from 'express';
import type { KeyCache } from '../auth/key-cache';

/** Tenant and key issuance (docs/api/admin-tenants.md): /admin/v1, mounted behind adminAuth (ADMIN_API_KEY). */
export function adminRoutes(db: Db, keyCache: KeyCache): Router {
  const router = Router();

  router.post('/admin/v1/tenants', async (req, res) => {
    const input = parseOrThrow(CreateTenantSchema, req.body);
    const t = await createTenant(db, input);
    res.status(201).json({
      success: true,
      tenant_id: t.id,
      key_id: t.keyId,
      api_key: t.apiKey,
    } satisfies CreateTenantResponse);
  });

  router.post('/admin/v1/tenants/:id/keys', async (req, res) => {
    // Optional body {scope, name}: scope `full` unless given (docs/api/admin-tenants.md).
    const input = parseOrThrow(AdminIssueKeySchema, req.body);
    const key = await issueKey(db, req.params.id!, input);
    if (!key) throw notFound(ErrorText.tenantNotFound);
    res.status(201).json({
      success: true,
      tenant_id: key.tenantId,
      key_id: key.keyId,
      api_key: key.apiKey,
    } satisfies CreateKeyResponse);
  });

  router.delete('/admin/v1/keys/:keyId', async (req, res) => {
    if (!(await revokeKey(db, req.params.keyId!))) throw notFound(ErrorText.keyNotFound);
    keyCache.clear();
    res.json({ success: true, message: 'API key revoked' });
  });

  return router;
}
