/**
 * The SMTP envelopes of one copy (docs/inbound.md "Bounces, complaints and mailto unsubscribes"):
 *
 * - Domain mailers (we are the sending MTA, straight to the MX or through SMTP_RELAY_URL): one
 *   envelope per recipient whose sender is that recipient's VERP return path,
 *   `bounce+<copy_id>.<tag>@<bounce domain>` (libs/platform return-path.ts). A DSN or a report
 *   arriving there names exactly one recipient of one copy, even when it does not say which
 *   address failed (forwarding, redacted reports, non-standard bounces); the signed tag keeps a
 *   forged bounce from naming any other send or recipient. VERP needs a transaction per
 *   recipient (as Postfix does with VERP); the header From is untouched, DKIM signs the header
 *   From's domain (alignment for DMARC comes from DKIM, not from the return path).
 * - SMTP mailers (the tenant's own mail server with its credentials): one envelope for all
 *   recipients with the From address as sender. Such servers refuse or rewrite other senders
 *   (Gmail, Microsoft 365), and their bounces go back to the tenant's own mailbox.
 */
import { type SendingMailer, addressKey } from '@mailyard/contracts';
import { verpAddress } from '@mailyard/platform';
import type { Envelope } from '@mailyard/providers';

export interface ReturnPath {
  key: Buffer;
  bounceDomain: string;
}

export function envelopesFor(
  mailer: Pick<SendingMailer, 'kind'>,
  copyId: string,
  from: string,
  recipients: readonly string[],
  returnPath: ReturnPath,
): Envelope[] {
  const unique = [...new Map(recipients.map((r) => [addressKey(r), r])).values()];
  if (unique.length === 0) return [];
  if (mailer.kind !== 'domain') return [{ from, to: unique }];
  return unique.map((to) => ({
    from: verpAddress(returnPath.key, copyId, to, returnPath.bounceDomain),
    to: [to],
  }));
}
