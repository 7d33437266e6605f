/**
 * The returned original inside a bounce or complaint (a `message/rfc822` part, or its headers in
 * `text/rfc822-headers` / `message/global-headers`), as far as attribution needs it: the
 * Message-ID, the Return-Path (our VERP address when the receiving MTA recorded it), From,
 * Subject, and whether it carries `X-Is-Svc` (mail this service sent; services/send/src/mime).
 * Pure.
 */
import { type MimeMessage, embeddedHeaders, first } from './report-mime';

export interface OriginalMessage {
  messageId: string;
  /** The Return-Path address without angle brackets ('' when the original has none). */
  returnPath: string;
  from: string;
  subject: string;
  /** The original carries `X-Is-Svc`: sent by this service. */
  serviceSent: boolean;
}

const ORIGINAL_TYPES = ['message/rfc822', 'text/rfc822-headers', 'message/global-headers', 'message/global'];

export function originalMessage(mail: MimeMessage): OriginalMessage | null {
  const part = mail.parts.find((p) => ORIGINAL_TYPES.includes(p.type));
  if (!part) return null;
  const h = embeddedHeaders(part);
  if (h.size === 0) return null;
  return {
    messageId: first(h, 'message-id'),
    returnPath: stripAngles(first(h, 'return-path')),
    from: first(h, 'from'),
    subject: first(h, 'subject'),
    serviceSent: h.has('x-is-svc'),
  };
}

/**
 * `<a@b>` or `a@b` (with comments or display text around) -> `a@b`; '' when none. Linear: the
 * bare form is the first token (between spaces, `<>;,"`) with an `@` that has a character on
 * each side, found by splitting once (the regular expression `[^…]+@[^…]+` it replaces went
 * back over a long token without `@` from every position of it: quadratic).
 */
export function stripAngles(value: string): string {
  const angled = /<([^<>\s]*)>/.exec(value);
  if (angled) return angled[1]!;
  for (const token of value.split(/[\s<>;,"]+/)) {
    const at = token.indexOf('@', 1);
    if (at > 0 && at < token.length - 1) return token;
  }
  return '';
}
