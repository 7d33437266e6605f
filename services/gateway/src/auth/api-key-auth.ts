import { ErrorText } from '@mailyard/contracts';
import {
  type Db,
  HttpError,
  type HttpNext,
  type HttpRequest,
  type HttpResponse,
  currentTrace,
} from '@mailyard/platform';
import { type KeyOwner, findKeyOwner, hashApiKey } from '@mailyard/store';
import type { KeyCache } from './key-cache';

/** The credential of a request: `Authorization: Bearer <key>` or `X-API-Key: <key>`. */
export function credentialOf(req: Pick<HttpRequest, 'headers'>): string | undefined {
  const auth = req.headers.authorization;
  if (auth) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    return m?.[1];
  }
  return (req.headers['x-api-key'] as string | undefined)?.trim() || undefined;
}

export function tenantOf(res: Pick<HttpResponse, 'locals'>): KeyOwner {
  const owner = res.locals.owner as KeyOwner | undefined;
  if (!owner) throw new Error('route mounted without apiKeyAuth');
  return owner;
}

/**
 * Authenticates every /v1 request; missing or unknown keys get the 401 envelope. Plain node
 * request/response: express's chain and the fast send route (app.ts) run the same instance.
 */
export function apiKeyAuth(db: Db, cache: KeyCache) {
  return async (req: HttpRequest, res: HttpResponse, next: HttpNext): Promise<void> => {
    const key = credentialOf(req);
    if (!key || key.length > 256) throw new HttpError(401, ErrorText.unauthorized);
    const hash = hashApiKey(key).toString('hex');
    let owner = cache.get(hash);
    if (owner === undefined) {
      owner = await findKeyOwner(db, key);
      cache.set(hash, owner);
    }
    if (!owner) throw new HttpError(401, ErrorText.unauthorized);
    res.locals.owner = owner;
    const trace = currentTrace();
    if (trace) trace.tenantId = owner.tenantId;
    next();
  };
}
