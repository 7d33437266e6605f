/**
 * The tenant's API keys (docs/api/keys.md): create (the key is shown once), list, revoke. Only a
 * `full` key gets here (auth/key-scope.ts). A revoked key stops working at once on this replica
 * (its key cache is cleared) and within API_KEY_CACHE_MS on the others. The tenant's last `full`
 * key cannot be revoked (409): without one nobody could manage keys again but the operator. A key
 * may revoke itself when another full key remains.
 */
import {
  type CreateApiKeyResponse,
  CreateApiKeySchema,
  ErrorText,
  IdPrefix,
  type ListApiKeysResponse,
  MAX_KEYS_PER_TENANT,
  hasIdPrefix,
} from '@mailyard/contracts';
import { type Db, HttpError, badRequest, conflict, notFound, parseOrThrow } from '@mailyard/platform';
import { tenantKeys } from '@mailyard/store';
import { Router } from 'express';
import { tenantOf } from '../auth/api-key-auth';
import type { KeyCache } from '../auth/key-cache';

export function keyRoutes(db: Db, keyCache: KeyCache): Router {
  const router = Router();

  router.post('/v1/keys', async (req, res) => {
    const input = parseOrThrow(CreateApiKeySchema, req.body);
    const key = await tenantKeys.create(db, tenantOf(res).tenantId, input, MAX_KEYS_PER_TENANT);
    if (key === 'limit') throw new HttpError(409, ErrorText.tooManyKeys);
    res
      .status(201)
      .json({ success: true, key_id: key.keyId, api_key: key.apiKey } satisfies CreateApiKeyResponse);
  });

  router.get('/v1/keys', async (_req, res) => {
    const data = await tenantKeys.list(db, tenantOf(res).tenantId);
    res.json({ success: true, data } satisfies ListApiKeysResponse);
  });

  router.delete('/v1/keys/:key_id', async (req, res) => {
    const keyId = req.params.key_id ?? '';
    if (!hasIdPrefix(keyId, IdPrefix.apiKey)) throw badRequest(ErrorText.invalidKeyId);
    const r = await tenantKeys.revoke(db, tenantOf(res).tenantId, keyId);
    if (r === 'not_found') throw notFound(ErrorText.keyNotFound);
    if (r === 'last_full') throw conflict(ErrorText.lastFullKey);
    keyCache.clear();
    res.json({ success: true, message: 'API key revoked' });
  });

  return router;
}
