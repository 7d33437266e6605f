import { createHash, timingSafeEqual } from 'node:crypto';
import { ErrorText } from '@mailyard/contracts';
import { HttpError } from '@mailyard/platform';
import type { NextFunction, Request, Response } from 'express';
import { credentialOf } from '../auth/api-key-auth';

const digest = (s: string) => createHash('sha256').update(s).digest();

/** Guards /admin/v1 with ADMIN_API_KEY (Bearer); without that variable the admin API is off. */
export function adminAuth(adminKey: string | undefined) {
  const expected = adminKey ? digest(adminKey) : undefined;
  return (req: Request, _res: Response, next: NextFunction): void => {
    if (!expected) throw new HttpError(404, ErrorText.notFound);
    const given = credentialOf(req);
    if (!given || !timingSafeEqual(digest(given), expected))
      throw new HttpError(401, ErrorText.adminUnauthorized);
    next();
  };
}
