import { ErrorText } from '@mailyard/contracts';
import { type Db, HttpError, currentTrace } from '@mailyard/platform';
import { type KeyOwner, findKeyOwner, hashApiKey } from '@mailyard/store';
import type { NextFunction, Request, Response } from 'express';
import type { KeyCache } from './key-cache';

/** The credential of a request: `Authorization: Bearer <key>` or `X-API-Key: <key>`. */
export function credentialOf(req: Request): string | undefined {
  const auth = req.get('authorization');
  if (auth) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    return m?.[1];
  }
  return req.get('x-api-key')?.trim() || undefined;
}

export function tenantOf(res: Response): KeyOwner {
  const owner = res.locals.owner as KeyOwner | undefined;
  if (!owner) throw new Error('route mounted without apiKeyAuth');
  return owner;
}

/** Authenticates every /v1 request; missing or unknown keys get the 401 envelope. */
export function apiKeyAuth(db: Db, cache: KeyCache) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
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
