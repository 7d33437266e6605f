import { InputErrorText, unsafeText } from '@mailyard/contracts';
import type { NextFunction, Request, Response } from 'express';
import { HttpError } from './errors';

/**
 * The URL half of the edge validation (the body half is jsonBody): every path segment must
 * percent-decode (express would otherwise fail in its router) and neither the decoded path nor
 * a query parameter may hold NUL or a lone surrogate. Path parameters are substrings of the
 * decoded segments, so checking the path once covers every `:param` of every route.
 */
export function inputGuard(req: Request, _res: Response, next: NextFunction): void {
  for (const segment of req.path.split('/')) {
    if (!segment.includes('%')) continue;
    let decoded: string;
    try {
      decoded = decodeURIComponent(segment);
    } catch {
      throw new HttpError(400, InputErrorText.malformedUrl);
    }
    if (unsafeText(decoded)) throw new HttpError(400, InputErrorText.urlNul);
  }
  const query = req.query as Record<string, string | string[] | undefined>;
  for (const [name, value] of Object.entries(query)) {
    if (unsafeText(name)) throw new HttpError(400, InputErrorText.nul('query parameter names'));
    for (const v of Array.isArray(value) ? value : [value]) {
      if (typeof v !== 'string') continue;
      const problem = unsafeText(v);
      if (problem === 'nul') throw new HttpError(400, InputErrorText.nul(name));
      if (problem === 'surrogate') throw new HttpError(400, InputErrorText.loneSurrogate(name));
    }
  }
  next();
}
