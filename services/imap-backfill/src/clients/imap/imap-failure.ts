/**
 * An IMAP failure (libs/providers classifyImapError: what it means is decided there, once for
 * every IMAP client) as a MailboxError kind and message. Authentication rejected is `auth`: the
 * mailer is deactivated. Connection-level failures (refused, reset, timeouts, closed or
 * dropped, [UNAVAILABLE], [INUSE]) and a command past its deadline (the server kept the command going)
 * are `transient` and retried. A response over a parser bound (a literal larger than the message
 * cap, an endless line) is `terminal`: the server would send it again. Anything else (a TLS or
 * certificate failure, the server's refusal) is `terminal`. Never includes the password.
 */
import type { ImapFailure } from '@mailyard/providers';
import type { MailboxErrorKind } from '../../mailbox/mailbox-client';

export function imapMailboxFailure(
  f: ImapFailure,
  host: string,
): { kind: MailboxErrorKind; message: string } {
  switch (f.kind) {
    case 'deadline':
      return { kind: 'transient', message: `${host}: ${f.message}` };
    case 'over-limit':
      return {
        kind: 'terminal',
        message: `${host}: the server sent a response over the limit: ${f.message} (${f.code})`,
      };
    case 'auth':
      return {
        kind: 'auth',
        message: `${f.serverResponseCode ? `[${f.serverResponseCode}] ` : ''}${f.text}`,
      };
    case 'timeout':
    case 'unreachable':
    case 'closed':
    case 'unavailable':
      return { kind: 'transient', message: `${host}: ${f.text}${f.code ? ` (${f.code})` : ''}` };
    case 'dropped':
      return { kind: 'transient', message: `${host}: ${f.text}` };
    default:
      return { kind: 'terminal', message: `${host}: ${f.text}` };
  }
}
