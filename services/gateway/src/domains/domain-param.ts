/**
 * The `{domain}` of the /v1/domain/{domain}... routes (details, delete, verify, report summaries,
 * reputation, resume): an A-label or Unicode name, read as its lowercase ASCII form; a missing or
 * invalid name is a 400 with the domain routes' messages.
 */
import { DomainErrorText, normalizeDomainName } from '@mailyard/contracts';
import { badRequest } from '@mailyard/platform';
import type { Request } from 'express';

export function domainParam(req: Request): string {
  const raw = req.params.domain;
  if (typeof raw !== 'string' || !raw) throw badRequest(DomainErrorText.domainRequired);
  const name = normalizeDomainName(raw);
  if (!name) throw badRequest(DomainErrorText.invalidDomain);
  return name.ascii;
}
