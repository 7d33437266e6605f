import { ErrorText } from '@mailyard/contracts';
import {
  HttpError,
  type LinkClaims,
  type LinkKind,
  type Logger,
  counter,
  verifyLinkToken,
} from '@mailyard/platform';
import type { Request } from 'express';
import type { Hit, Recorder } from '../record';

/** What the tracking routes share. */
export interface RouteDeps extends Recorder {
  logger: Logger;
  /** The link signing key (linkTokenKey of SECRET_KEY). */
  key: Buffer;
}

export const hitsTotal = counter('mailyard_tracking_hits_total', 'Tracking hits by kind and outcome', [
  'kind',
  'outcome',
]);

/**
 * The claims of the request's `:token` when it is a valid token of `kind`; anything else is a
 * 404 (never a redirect, never an event).
 */
export function claimsOf(deps: RouteDeps, req: Request, kind: LinkKind): LinkClaims {
  const token = String(req.params.token ?? '');
  const claims = verifyLinkToken(deps.key, token);
  if (!claims || claims.kind !== kind) {
    hitsTotal.inc({ kind, outcome: 'invalid' });
    throw new HttpError(404, ErrorText.notFound);
  }
  return claims;
}

export function hitOf(req: Request): Hit {
  return { ip: req.ip ?? '', userAgent: req.get('user-agent'), at: new Date() };
}
