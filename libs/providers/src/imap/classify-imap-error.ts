/**
 * What an IMAP failure means, decided once for every IMAP client (the gateway's login check,
 * the IMAP service's mailboxes): each maps the kind to its own outcome and wording.
 *
 * | kind          | what                                                                  |
 * |---------------|-----------------------------------------------------------------------|
 * | `deadline`    | a command past its deadline (deadline.ts ImapDeadlineError)           |
 * | `over-limit`  | a response over a parser bound (limits.ts): the server would resend it |
 * | `auth`        | authentication rejected: imapflow's `authenticationFailed`, or a NO   |
 * |               | [AUTHENTICATIONFAILED] reply                                          |
 * | `timeout`     | connect, greeting or socket timeout (CONNECT_TIMEOUT, GREETING_TIMEOUT, ETIMEOUT, ETIMEDOUT) |
 * | `unreachable` | the connection failed (ECONNREFUSED, ECONNRESET, EHOSTUNREACH, ENETUNREACH, ENOTFOUND, EAI_AGAIN, EPIPE) |
 * | `closed`      | the server closed the connection (NoConnection, ClosedAfterConnectTLS, ClosedAfterConnectText) |
 * | `unavailable` | the server is busy: [UNAVAILABLE], [INUSE], [LIMIT], [SERVERBUG]      |
 * | `tls`         | the TLS handshake or the certificate failed (SSL, TLS, CERT in code or message) |
 * | `dropped`     | no known code, but the text says the connection or socket went away or timed out |
 * | `refused`     | anything else: the server's own refusal                               |
 *
 * The rules are checked in that order. `text` is the server's reply when it gave one, else the
 * library's message. Never includes the password (imapflow does not put it in errors).
 */
import { ImapDeadlineError } from './deadline';
import { isImapLimitError } from './limits';

export type ImapFailureKind =
  | 'deadline'
  | 'over-limit'
  | 'auth'
  | 'timeout'
  | 'unreachable'
  | 'closed'
  | 'unavailable'
  | 'tls'
  | 'dropped'
  | 'refused';

export interface ImapFailure {
  kind: ImapFailureKind;
  /** The library's error code ('' when none). */
  code: string;
  /** The library's message. */
  message: string;
  /** The server's reply text, else the message. */
  text: string;
  /** The bracketed response code of the server's reply ('' when none). */
  serverResponseCode: string;
}

const TIMEOUT_CODES = new Set(['CONNECT_TIMEOUT', 'GREETING_TIMEOUT', 'ETIMEOUT', 'ETIMEDOUT']);
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
]);
const CLOSED_CODES = new Set(['NoConnection', 'ClosedAfterConnectTLS', 'ClosedAfterConnectText']);
const DROPPED_TEXT = /connection (not available|closed)|socket|timed? ?out/i;
const UNAVAILABLE_RESPONSES = new Set(['UNAVAILABLE', 'INUSE', 'LIMIT', 'SERVERBUG']);
const TLS_TEXT = /SSL|TLS|CERT|certificate|self.signed/i;

type ImapError = Error & {
  code?: string;
  responseText?: string;
  authenticationFailed?: boolean;
  serverResponseCode?: string;
};

export function classifyImapError(err: unknown): ImapFailure {
  const e = (err ?? {}) as ImapError;
  const code = e.code ?? '';
  const message = e.message ?? String(err);
  const failure = (kind: ImapFailureKind): ImapFailure => ({
    kind,
    code,
    message,
    text: e.responseText ?? message,
    serverResponseCode: e.serverResponseCode ?? '',
  });
  if (err instanceof ImapDeadlineError) return failure('deadline');
  if (isImapLimitError(err)) return failure('over-limit');
  if (e.authenticationFailed || e.serverResponseCode === 'AUTHENTICATIONFAILED') return failure('auth');
  if (TIMEOUT_CODES.has(code)) return failure('timeout');
  if (UNREACHABLE_CODES.has(code)) return failure('unreachable');
  if (CLOSED_CODES.has(code)) return failure('closed');
  if (e.serverResponseCode && UNAVAILABLE_RESPONSES.has(e.serverResponseCode)) return failure('unavailable');
  if (TLS_TEXT.test(code) || TLS_TEXT.test(message)) return failure('tls');
  if (DROPPED_TEXT.test(e.responseText ?? message)) return failure('dropped');
  return failure('refused');
}
