import { hash } from 'node:crypto';
import { ErrorText } from '@mailyard/contracts';
import {
  type Db,
  HttpError,
  type HttpNext,
  type HttpRequest,
  type HttpResponse,
  currentTrace,
} from '@mailyard/platform';
import { type KeyOwner, findKeyOwner } from '@mailyard/store';
import type { KeyCache } from './key-cache';
import { scopeRefusal } from './key-scope';
import type { KeyUsage } from './key-usage';

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
 * The key cache's name for a key: its SHA-256 in hex (the stored digest, platform digestSecret, as hex), so the
 * cache never holds a key itself. One-shot `crypto.hash`: a createHash object per request cost
 * about 1.6 µs more (bench/history/05-2026-11-27-gateway-chain-the-send-route-s-steps-and-three-cuts.md).
 */
export const keyCacheName = (key: string): string => hash('sha256', key, 'hex');

/**
 * Authenticates every /v1 request; missing or unknown keys get the 401 envelope, a key used out
 * of its scope the 403 of key-scope.ts. Marks the key as used (key-usage.ts, no write here).
 * Plain node request/response: express's chain and the fast send route (app.ts) run the same
 * instance; the URL is express's originalUrl, or the raw URL on the fast route's exact entry.
 */
export function apiKeyAuth(db: Db, cache: KeyCache, usage?: KeyUsage) {
  return async (req: HttpRequest, res: HttpResponse, next: HttpNext): Promise<void> => {
    const key = credentialOf(req);
    if (!key || key.length > 256) throw new HttpError(401, ErrorText.unauthorized);
    const name = keyCacheName(key);
    let owner = cache.get(name);
    if (owner === undefined) {
      owner = await findKeyOwner(db, key);
      cache.set(name, owner);
    }
    if (!owner) throw new HttpError(401, ErrorText.unauthorized);
    const refusal = scopeRefusal(
      owner.scope,
      req.method ?? '',
      (req as { originalUrl?: string }).originalUrl ?? req.url ?? '',
    );
    if (refusal) throw new HttpError(403, refusal);
    usage?.mark(owner.keyId);
    res.locals.owner = owner;
    const trace = currentTrace();
    if (trace) trace.tenantId = owner.tenantId;
    next();
  };
}
