/**
 * imapflow errors -> MailboxError kinds. Authentication rejected (imapflow's
 * `authenticationFailed`, or a NO [AUTHENTICATIONFAILED] reply) is `auth`: the mailer is
 * deactivated. Connection-level failures (refused, reset, timeouts, closed, [UNAVAILABLE],
 * [INUSE]) and a command past its deadline (libs/providers ImapDeadlineError: the server kept
 * the command going) are `transient` and retried. A response over a parser bound (a literal
 * larger than the message cap, an endless line: libs/providers imap/limits.ts) is `terminal`:
 * the server would send it again. Anything else is `terminal`. Never includes the password.
 */
import { ImapDeadlineError, isImapLimitError } from '@mailyard/providers';
import type { MailboxErrorKind } from '../../mailbox/mailbox-client';

const TRANSIENT_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'EPIPE',
  'ETIMEDOUT',
  'ETIMEOUT',
  'CONNECT_TIMEOUT',
  'GREETING_TIMEOUT',
  'NoConnection',
  'ClosedAfterConnectTLS',
  'ClosedAfterConnectText',
]);
const TRANSIENT_RESPONSE = new Set(['UNAVAILABLE', 'INUSE', 'LIMIT', 'SERVERBUG']);

type ImapError = Error & {
  code?: string;
  responseText?: string;
  authenticationFailed?: boolean;
  serverResponseCode?: string;
};

export function classifyImapError(err: unknown, host: string): { kind: MailboxErrorKind; message: string } {
  if (err instanceof ImapDeadlineError) return { kind: 'transient', message: `${host}: ${err.message}` };
  if (isImapLimitError(err))
    return {
      kind: 'terminal',
      message: `${host}: the server sent a response over the limit: ${err.message} (${err.code})`,
    };
  const e = (err ?? {}) as ImapError;
  const text = e.responseText ?? e.message ?? String(err);
  if (e.authenticationFailed || e.serverResponseCode === 'AUTHENTICATIONFAILED')
    return { kind: 'auth', message: `${e.serverResponseCode ? `[${e.serverResponseCode}] ` : ''}${text}` };
  if (
    (e.code && TRANSIENT_CODES.has(e.code)) ||
    (e.serverResponseCode && TRANSIENT_RESPONSE.has(e.serverResponseCode))
  )
    return { kind: 'transient', message: `${host}: ${text}${e.code ? ` (${e.code})` : ''}` };
  if (/connection (not available|closed)|socket|timed? ?out/i.test(text))
    return { kind: 'transient', message: `${host}: ${text}` };
  return { kind: 'terminal', message: `${host}: ${text}` };
}
