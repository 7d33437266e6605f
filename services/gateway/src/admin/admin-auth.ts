import { ErrorText } from '@mailyard/contracts';
import { HttpError, digestSecret, secretMatches } from '@mailyard/platform';
import type { NextFunction, Request, Response } from 'express';
import { credentialOf } from '../auth/api-key-auth';

/**
 * Guards /admin/v1 with ADMIN_API_KEY (Bearer); without that variable the admin API is off. The
 * key is compared as a digest in constant time (platform issued-secret.ts).
 */
export function adminAuth(adminKey: string | undefined) {
  const expected = adminKey ? digestSecret(adminKey) : undefined;
  return (req: Request, _res: Response, next: NextFunction): void => {
    if (!expected) throw new HttpError(404, ErrorText.notFound);
    const given = credentialOf(req);
    if (!given || !secretMatches(given, expected)) throw new HttpError(401, ErrorText.adminUnauthorized);
    next();
  };
}
