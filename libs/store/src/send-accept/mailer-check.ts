import { ErrorText, domainOf, isDomainOrSubdomain, sendRefusal } from '@mailyard/contracts';
import { HttpError, unprocessable } from '@mailyard/platform';
import type { SendingMailerStatus } from '../sends';

/**
 * Whether `mailer` may send a message from `fromEmail` right now: the shared send policy
 * (libs/contracts mailers/capabilities.ts: unknown/deleted 404; receive-only, disabled,
 * deactivated, unverified domain 422), then the acceptance-only rule that a domain mailer's
 * `from` is the domain itself or any subdomain, as DMARC relaxed alignment allows.
 */
export function assertMailerCanSend(
  mailer: SendingMailerStatus | null,
  fromEmail: string,
): asserts mailer is SendingMailerStatus {
  const refusal = sendRefusal(mailer);
  if (refusal) throw new HttpError(refusal.status, refusal.message);
  if (!mailer || mailer.kind !== 'domain') return;
  if (!isDomainOrSubdomain(domainOf(fromEmail), mailer.domain)) {
    throw unprocessable(
      ErrorText.fromDomainMismatch,
      `from.email must be @${mailer.domain} or @<subdomain>.${mailer.domain}`,
    );
  }
}
