import { type ConfigType, ErrorText, domainOf, isDomainOrSubdomain } from '@mailyard/contracts';
import { notFound, unprocessable } from '@mailyard/platform';
import type { SendingMailerStatus } from '@mailyard/store';

/** Receive-only configurations: IMAP without an SMTP or OAuth sending side. */
export const RECEIVE_ONLY_CONFIG_TYPES: readonly ConfigType[] = ['imap', 'basic_imap', 'oauth_imap'];

/**
 * Whether `mailer` may send a message from `fromEmail` right now. Unknown, other tenant's and
 * deleted mailers are 404; every other refusal is semantic (422): a receive-only mailer, a
 * disabled or deactivated mailer, an unverified sending domain, or a `from` address outside the
 * sending domain (the domain itself or any subdomain, as DMARC relaxed alignment allows).
 */
export function assertMailerCanSend(
  mailer: SendingMailerStatus | null,
  fromEmail: string,
): asserts mailer is SendingMailerStatus {
  if (!mailer || mailer.state === 'deleted') throw notFound(ErrorText.mailerNotFound);
  if (RECEIVE_ONLY_CONFIG_TYPES.includes(mailer.configType)) throw unprocessable(ErrorText.mailerCannotSend);
  if (mailer.state === 'disabled') throw unprocessable(ErrorText.mailerDisabled);
  if (mailer.state === 'deactivated') throw unprocessable(ErrorText.mailerDeactivated);
  if (mailer.kind !== 'domain') return;
  if (!mailer.verified) throw unprocessable(ErrorText.domainNotVerified);
  if (!isDomainOrSubdomain(domainOf(fromEmail), mailer.domain)) {
    throw unprocessable(
      ErrorText.fromDomainMismatch,
      `from.email must be @${mailer.domain} or @<subdomain>.${mailer.domain}`,
    );
  }
}
