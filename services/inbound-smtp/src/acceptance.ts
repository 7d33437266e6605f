/**
 * The MX service's acceptance policy (docs/inbound.md "The MX service (`services/inbound-smtp`)", in order), pure:
 *
 * At RCPT TO, first the count (`decideRecipientCount`): a recipient already accepted for this
 * message (the address compared case-insensitively) is answered 250 again and kept once; a new
 * one past the message's limit (INBOUND_MAX_RECIPIENTS) gets `452 4.5.3` (RFC 5321 4.5.3.1.10:
 * the client sends the rest in another transaction). Then (`decideRecipient`):
 *   0. no incoming domain for the recipient's domain -> 550 (we are not a relay);
 *   1. domain `wildcard` -> accept every address under it;
 *   2. username not configured -> 550;
 *   3. username inactive -> 550;
 *   otherwise accept, remembering whether `strict_replies` must be checked after DATA.
 * At end of DATA (`decideAfterData`), per recipient:
 *   4. `strict_replies` and In-Reply-To does not start with `<svc_mailer_` -> 550 for that recipient;
 *   5./6. accept.
 * On the bounce domain (BOUNCE_DOMAIN, default SERVICE_DOMAIN) only the service's own addresses
 * exist (`decideServiceRecipient`): a VERP return path whose signed tag names a recipient of the
 * copy, the feedback-loop address `fbl@`, a signed mailto unsubscribe address; anything else
 * there is 550 (service-address.ts checks the signatures).
 * Rejections carry an enhanced status code and a text the sender can act on.
 */

export const SERVICE_MESSAGE_ID_PREFIX = '<svc_mailer_';

export interface RecipientRoute {
  wildcard: boolean;
  /** null when the username is not configured under the domain. */
  address: { active: boolean; strictReplies: boolean } | null;
}

export type RecipientDecision =
  | { accept: true; strictReplies: boolean }
  | { accept: false; code: 550; message: string };

export function decideRecipient(address: string, route: RecipientRoute | null): RecipientDecision {
  if (!route) return reject(`5.1.2 <${address}>: we do not accept mail for this domain (relay denied)`);
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

export type ServiceAddressKind = 'bounce' | 'feedback' | 'unsubscribe';

/** RCPT TO on the bounce domain: `kind` is what the verified address is, null when it is none. */
export function decideServiceRecipient(address: string, kind: ServiceAddressKind | null): RecipientDecision {
  if (!kind) return reject(`5.1.1 <${address}>: no such mailbox`);
  return { accept: true, strictReplies: false };
}

export type DataDecision = { accept: true } | { accept: false; code: 550; message: string };

/** Rules 4-6 for one accepted recipient, from the message's In-Reply-To header ('' when absent). */
export function decideAfterData(address: string, strictReplies: boolean, inReplyTo: string): DataDecision {
  if (!strictReplies) return { accept: true };
  if (inReplyTo.trim().startsWith(SERVICE_MESSAGE_ID_PREFIX)) return { accept: true };
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
