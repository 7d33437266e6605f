/**
 * Verifies an address on the bounce domain and finds what it names (libs/platform
 * return-path.ts signs them; the store holds the sends):
 * - `bounce+<copy_id>.<tag>`: the recipient of the copy whose tag matches (null: forged, or the
 *   send no longer exists);
 * - `unsubscribe+<log_id>.<tag>`: the email_logs row, when the tag is ours;
 * - `fbl`: the feedback-loop address to register with mailbox providers; reports arriving there
 *   are attributed from their content (a signed return path inside), never from the address;
 * - `dmarc`, `tls-rpt`: where DMARC aggregate and TLS-RPT reports arrive (reports/report-mail.ts
 *   keys them to tenants' domains by their content).
 * Local parts are compared case-insensitively.
 * Used at RCPT TO (server.ts, to answer 550 for anything else) and again by the consumer
 * (service-mail.ts) for the address found in the message.
 */
import {
  type Queryable,
  parseServiceAddress,
  unsubscribeTagValid,
  verpNamesRecipient,
} from '@mailyard/platform';
import { type TrackedRecipient, findCopyRecipients, findLogRecipient } from '@mailyard/store';
import type { ServiceAddressKind } from './acceptance';

export const FEEDBACK_LOCAL_PART = 'fbl';
export const DMARC_LOCAL_PART = 'dmarc';
export const TLS_RPT_LOCAL_PART = 'tls-rpt';

export type ResolvedServiceAddress =
  | { kind: 'bounce' | 'unsubscribe'; recipient: TrackedRecipient }
  | { kind: 'feedback' | 'dmarc' | 'tls_rpt' };

/** What the local part of an address on the bounce domain names; null when nothing (or forged). */
export async function resolveServiceAddress(
  db: Queryable,
  key: Buffer,
  localPart: string,
): Promise<ResolvedServiceAddress | null> {
  const plain = localPart.toLowerCase();
  if (plain === FEEDBACK_LOCAL_PART) return { kind: 'feedback' };
  if (plain === DMARC_LOCAL_PART) return { kind: 'dmarc' };
  if (plain === TLS_RPT_LOCAL_PART) return { kind: 'tls_rpt' };
  const parsed = parseServiceAddress(localPart);
  if (!parsed) return null;
  if (parsed.kind === 'unsubscribe') {
    if (!unsubscribeTagValid(key, parsed)) return null;
    const recipient = await findLogRecipient(db, parsed.logId);
    return recipient ? { kind: 'unsubscribe', recipient } : null;
  }
  const recipients = await findCopyRecipients(db, parsed.copyId);
  const recipient = recipients.find((r) => verpNamesRecipient(key, parsed, r.email));
  return recipient ? { kind: 'bounce', recipient } : null;
}

/** The recipient a full return-path address (from inside a report) names, verified; else null. */
export async function attributeReturnPath(
  db: Queryable,
  key: Buffer,
  address: string,
): Promise<TrackedRecipient | null> {
  const at = address.lastIndexOf('@');
  const local = at > 0 ? address.slice(0, at) : address;
  if (!/^bounce\+/i.test(local)) return null;
  const resolved = await resolveServiceAddress(db, key, local);
  return resolved?.kind === 'bounce' ? resolved.recipient : null;
}

export const kindOf = (r: ResolvedServiceAddress | null): ServiceAddressKind | null => r?.kind ?? null;
