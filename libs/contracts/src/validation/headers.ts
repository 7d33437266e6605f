/** RFC 5322 field-name: printable US-ASCII except the colon. */
const FIELD_NAME = /^[\x21-\x39\x3B-\x7E]+$/;

/** Custom headers a send may set that the service honors specially (docs/api/send.md). */
export const THREADING_HEADERS = ['message-id', 'in-reply-to', 'references', 'thread-id'] as const;

/**
 * Headers the service owns: set from the payload's own fields, by the MIME builder, by DKIM
 * signing or by receivers. A custom header may not override them (400).
 */
export const PROTECTED_HEADERS: readonly string[] = [
  'from',
  'sender',
  'to',
  'cc',
  'bcc',
  'subject',
  'date',
  'reply-to',
  'return-path',
  'mime-version',
  'dkim-signature',
  'domainkey-signature',
  'received',
  'authentication-results',
  'x-is-svc',
];
/** Every header starting with one of these is protected too (Content-Type, Resent-From, ARC-Seal, ...). */
export const PROTECTED_HEADER_PREFIXES: readonly string[] = ['content-', 'resent-', 'arc-'];

export const isFieldName = (name: string): boolean => FIELD_NAME.test(name);

export function isProtectedHeader(name: string): boolean {
  const n = name.toLowerCase();
  return PROTECTED_HEADERS.includes(n) || PROTECTED_HEADER_PREFIXES.some((p) => n.startsWith(p));
}

export const isThreadingHeader = (name: string): boolean =>
  (THREADING_HEADERS as readonly string[]).includes(name.toLowerCase());
