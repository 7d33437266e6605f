/**
 * The MX service's acceptance policy (docs/inbound.md "Acceptance", in order), pure:
 *
 * At RCPT TO, first the count (`decideRecipientCount`): a recipient already accepted for this
 * message (the address compared case-insensitively) is answered 250 again and kept once; a new
 * one past the message's limit (INBOUND_MAX_RECIPIENTS) gets `452 4.5.3` (RFC 5321 4.5.3.1.10:
 * the client sends the rest in another transaction). Then (`decideRecipient`):
 *   0. no incoming domain for the recipient's domain, or its sending domain deleted -> 550 5.1.2
 *      (we are not a relay); the sending domain no longer verified -> 450 4.1.2 (deferred: the
 *      sender retries for days, and the domain's background re-checks may verify it again);
 *   1. domain `wildcard` -> accept every address under it;
 *   2. username not configured -> 550;
 *   3. username inactive -> 550;
 *   otherwise accept, remembering whether `strict_replies` must be checked after DATA.
 * Rule 4 depends on the message's In-Reply-To, which SMTP only carries after the recipients, and
 * SMTP has one reply per DATA for all of them. So a transaction never mixes the two kinds
 * (`decideRecipientMix`): the first accepted recipient sets its kind (strict_replies or not) and
 * a recipient of the other kind gets `452 4.5.3` (the client sends it in another transaction,
 * as for the recipient cap). Every strict_replies recipient of a message then shares one verdict,
 * and the reply to DATA is that verdict for all of them: no recipient is dropped behind a 250.
 * At end of DATA (`decideAfterData`):
 *   4. `strict_replies` and In-Reply-To does not start with our Message-ID prefix `svc_mailer_`
 *      (compared case-insensitively, with or without its opening `<`; the first id counts) -> 550;
 *   5./6. accept.
 * On the bounce domain (BOUNCE_DOMAIN, default SERVICE_DOMAIN) only the service's own addresses
 * exist (`decideServiceRecipient`): a VERP return path whose signed tag names a recipient of the
 * copy, the feedback-loop address `fbl@`, a signed mailto unsubscribe address, the report
 * addresses `dmarc@` and `tls-rpt@`; anything else there is 550 (service-address.ts checks the
 * signatures). When SERVICE_DOMAIN is another domain, the report addresses exist there too
 * (the `rua` the domains publish names it) and nothing else of the service's
 * (`serviceAddressesOn` says which domain holds which).
 * Rejections carry an enhanced status code and a text the sender can act on.
 */
import { SERVICE_MESSAGE_ID_PREFIX } from '@mailyard/contracts';

/** The first message id of In-Reply-To is one of ours: optional blanks and `<`, then the prefix in any case. */
const OUR_REPLY = new RegExp(`^\\s*<?\\s*${SERVICE_MESSAGE_ID_PREFIX}`, 'i');

export interface RecipientRoute {
  wildcard: boolean;
  /** The sending domain is verified now (a deleted one has no route). */
  verified: boolean;
  /** null when the username is not configured under the domain. */
  address: { active: boolean; strictReplies: boolean } | null;
}

export type RecipientDecision =
  | { accept: true; strictReplies: boolean }
  | { accept: false; code: 550 | 450; message: string };

export function decideRecipient(address: string, route: RecipientRoute | null): RecipientDecision {
  if (!route) return reject(`5.1.2 <${address}>: we do not accept mail for this domain (relay denied)`);
  if (!route.verified)
    return {
      accept: false,
      code: 450,
      message: `4.1.2 <${address}>: the domain is not verified at the moment, try again later`,
    };
  if (route.wildcard) return { accept: true, strictReplies: false };
  if (!route.address) return reject(`5.1.1 <${address}>: no such mailbox`);
  if (!route.address.active) return reject(`5.2.1 <${address}>: mailbox disabled, not accepting messages`);
  return { accept: true, strictReplies: route.address.strictReplies };
}

export type RecipientCountDecision =
  | { kind: 'new' }
  | { kind: 'repeat' }
  | { kind: 'over'; code: 452; message: string };

/**
 * `key` is the recipient as splitRecipient normalises it (lowercase); `accepted` the keys
 * already accepted for this message (a Set, or a Map keyed by them).
 */
export function decideRecipientCount(
  accepted: { has(key: string): boolean; readonly size: number },
  key: string,
  max: number,
): RecipientCountDecision {
  if (accepted.has(key)) return { kind: 'repeat' };
  if (accepted.size >= max)
    return { kind: 'over', code: 452, message: `4.5.3 Too many recipients (at most ${max} per message)` };
  return { kind: 'new' };
}

export type RecipientMixDecision = { ok: true } | { ok: false; code: 452; message: string };

/**
 * A transaction holds strict_replies recipients only or none (see the top of this file):
 * `transactionStrict` is the kind of the recipients already accepted (null: none yet).
 */
export function decideRecipientMix(
  address: string,
  transactionStrict: boolean | null,
  strictReplies: boolean,
): RecipientMixDecision {
  if (transactionStrict === null || transactionStrict === strictReplies) return { ok: true };
  return {
    ok: false,
    code: 452,
    message: `4.5.3 <${address}>: send this recipient in a separate transaction (its replies-only rule is decided on the message)`,
  };
}

export type ServiceAddressKind = 'bounce' | 'feedback' | 'unsubscribe' | 'dmarc' | 'tls_rpt';

/** The report addresses (DMARC aggregate `rua`, TLS-RPT `rua`): the only ones on SERVICE_DOMAIN. */
export const REPORT_ADDRESS_KINDS: readonly ServiceAddressKind[] = ['dmarc', 'tls_rpt'];

/** Which service addresses `domain` (lowercase) holds: all of them, the report addresses, or none (tenant mail). */
export type ServiceAddressScope = 'all' | 'reports';

export function serviceAddressesOn(
  domain: string,
  bounceDomain: string,
  serviceDomain: string,
): ServiceAddressScope | null {
  if (domain === bounceDomain) return 'all';
  if (domain === serviceDomain) return 'reports';
  return null;
}

/**
 * RCPT TO on a domain of the service's addresses: `kind` is what the verified address is, null
 * when it is none; on SERVICE_DOMAIN (scope `reports`) only the report addresses exist.
 */
export function decideServiceRecipient(
  address: string,
  kind: ServiceAddressKind | null,
  scope: ServiceAddressScope = 'all',
): RecipientDecision {
  if (!kind || (scope === 'reports' && !REPORT_ADDRESS_KINDS.includes(kind)))
    return reject(`5.1.1 <${address}>: no such mailbox`);
  return { accept: true, strictReplies: false };
}

export type DataDecision = { accept: true } | { accept: false; code: 550; message: string };

/** Rules 4-6 for one accepted recipient, from the message's In-Reply-To header ('' when absent). */
export function decideAfterData(address: string, strictReplies: boolean, inReplyTo: string): DataDecision {
  if (!strictReplies) return { accept: true };
  if (OUR_REPLY.test(inReplyTo)) return { accept: true };
  return reject(`5.7.1 <${address}>: only replies to messages sent by this service are accepted`);
}

/** Splits `local@domain` into the lowercase local part and ASCII lowercase domain; null if malformed. */
export function splitRecipient(address: string): { username: string; domain: string } | null {
  const at = address.lastIndexOf('@');
  if (at <= 0 || at === address.length - 1) return null;
  return { username: address.slice(0, at).toLowerCase(), domain: address.slice(at + 1).toLowerCase() };
}

function reject(message: string): { accept: false; code: 550; message: string } {
  return { accept: false, code: 550, message };
}
