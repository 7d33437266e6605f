/**
 * Classifies a failed delivery (an SMTP reply, a connection or DNS error) into what the send
 * service does next and what the SMTP_ERROR event says:
 *
 * - `temporary`: 4xx replies (and 503), timeouts, connection, TLS and DNS lookup errors:
 *   retried with back-off while the attempt budget lasts.
 * - `permanent`: 5xx replies and errors that cannot heal (no such domain, null MX, a message
 *   the transport refuses to build): final at once.
 * - `auth`: the server rejected the mailer's credentials (5xx reply to AUTH, or 530/534/535):
 *   final at once, and the mailer is deactivated.
 *
 * `bounceCategory` (docs/deliverability.md "Bounce categories") says why the recipient's mail
 * failed, from the one classifier (libs/contracts classifyBounce) for a reply; `dns`, `tls` or
 * `unknown` for a failure without a reply; absent for `auth` and for failures that are not about
 * the recipient at all (the mailer's configuration, a refused target): those are not bounces.
 *
 * `failedReason` is a human-readable mapping of the reply (enhanced status code first, then the
 * basic code); when neither is mapped it is the raw provider text. `providerError` is always
 * the raw text (the server's reply, or the error message when there was no reply).
 */

import { type BounceCategory, type DeactivationReason, classifyBounce } from '@mailyard/contracts';

export type FailureKind = 'temporary' | 'permanent' | 'auth';

/** Every `auth` failure's failedReason starts with this (the consumer recognizes recorded ones by it). */
export const AUTH_REASON_PREFIX = 'Authentication';

export interface DeliveryFailure {
  kind: FailureKind;
  /** Basic SMTP reply code, when the server answered. */
  responseCode?: number;
  /** Enhanced status code (RFC 3463), e.g. "5.1.1", when the reply carried one. */
  enhancedCode?: string;
  failedReason: string;
  providerError: string;
  /**
   * For an `auth` failure of an OAuth mailer: how the mailer is deactivated (`oauth_revoked`
   * when the grant is gone, `provider_auth_error` when the provider refused the account).
   */
  deactivation?: DeactivationReason;
  /** For a `temporary` failure: the provider's Retry-After (ms); the retry waits at least this long. */
  retryAfterMs?: number;
  /** Why the recipient's mail failed (SMTP_ERROR `details.bounce_category`); absent: not a bounce. */
  bounceCategory?: BounceCategory;
}

/** The fields of a nodemailer error (or any error) this module reads. */
export interface SmtpErrorLike {
  message?: string;
  code?: string;
  responseCode?: number;
  response?: string;
  command?: string;
}

/** Enhanced status codes by subject.detail (class-independent), RFC 3463 / RFC 5248. */
const ENHANCED: Record<string, string> = {
  '1.0': 'Recipient address rejected',
  '1.1': 'Recipient address does not exist',
  '1.2': 'Recipient domain does not exist or does not accept mail',
  '1.3': 'Recipient address has an invalid syntax',
  '1.4': 'Recipient address is ambiguous',
  '1.6': 'Recipient has moved and left no forwarding address',
  '1.7': 'Sender address is invalid',
  '1.8': 'Sender domain is invalid or rejected',
  '1.10': 'Recipient domain does not accept mail (null MX)',
  '2.0': 'Recipient mailbox is unavailable',
  '2.1': 'Recipient mailbox is disabled',
  '2.2': 'Mailbox full',
  '2.3': 'Message too large for the recipient mailbox',
  '2.4': 'Mailing list expansion problem',
  '3.0': 'Recipient mail system problem',
  '3.1': 'Recipient mail system is full',
  '3.2': 'Recipient mail system is not accepting messages',
  '3.4': 'Message too large',
  '4.0': 'Network or routing problem',
  '4.1': 'The recipient server did not answer',
  '4.2': 'Connection to the recipient server dropped',
  '4.3': 'Directory server failure at the recipient server',
  '4.4': 'Unable to route the message',
  '4.5': 'Recipient mail system is congested',
  '4.6': 'Routing loop detected',
  '4.7': 'Delivery time expired',
  '5.0': 'Mail protocol error',
  '5.3': 'Too many recipients',
  '6.0': 'Message content or media is not supported',
  '7.0': 'Rejected by the recipient server for security or policy reasons',
  '7.1': 'Rejected by the recipient server: sender not permitted (policy or spam block)',
  '7.7': 'Message integrity check failed',
  '7.8': 'Authentication credentials invalid',
  '7.9': 'Authentication mechanism too weak',
  '7.11': 'Encryption required by the recipient server',
  '7.23': 'SPF validation failed',
  '7.25': 'Reverse DNS validation failed for the sending IP',
  '7.26': 'Sender authentication failed (SPF/DKIM/DMARC)',
  '7.27': 'Sender address has a null MX',
};

/** Basic reply codes, used when the reply has no (mapped) enhanced code. */
const BASIC: Record<number, string> = {
  421: 'Temporary failure: the recipient server is unavailable or closing the connection',
  432: 'Temporary failure: a password transition is needed',
  450: 'Temporary failure: recipient mailbox unavailable (busy or greylisted)',
  451: 'Temporary failure: local error at the recipient server',
  452: 'Temporary failure: insufficient storage at the recipient server',
  454: 'Temporary authentication failure at the mail server',
  455: 'Temporary failure: the server cannot accommodate the parameters',
  500: 'Mail server did not recognize a command',
  501: 'Syntax error in parameters or arguments',
  502: 'Command not implemented by the mail server',
  503: 'Bad sequence of commands',
  504: 'Command parameter not implemented by the mail server',
  521: 'Recipient server does not accept mail',
  530: 'Authentication required by the mail server',
  534: 'Authentication mechanism too weak',
  535: 'Authentication credentials rejected by the mail server',
  550: 'Recipient mailbox unavailable or rejected',
  551: 'Recipient is not local to the server',
  552: 'Mailbox full or message too large',
  553: 'Mailbox name not allowed',
  554: 'Transaction failed: rejected by the recipient server',
  555: 'MAIL FROM or RCPT TO parameters not recognized',
  556: 'Recipient domain does not accept mail',
};

/** Errors without an SMTP reply, by nodemailer / Node code. */
const NO_REPLY: Record<string, { kind: FailureKind; reason: string; category?: BounceCategory }> = {
  ETIMEDOUT: { kind: 'temporary', reason: 'Connection to the mail server timed out' },
  ECONNECTION: { kind: 'temporary', reason: 'Could not connect to the mail server' },
  ESOCKET: { kind: 'temporary', reason: 'Could not connect to the mail server' },
  ECONNREFUSED: { kind: 'temporary', reason: 'Could not connect to the mail server' },
  ECONNRESET: { kind: 'temporary', reason: 'Connection to the mail server was reset' },
  EDNS: { kind: 'temporary', reason: 'DNS lookup of the mail server failed', category: 'dns' },
  ETLS: { kind: 'temporary', reason: 'TLS negotiation with the mail server failed', category: 'tls' },
  EREQUIRETLS: {
    kind: 'temporary',
    reason: 'The mail server does not support TLS, which the mailer requires',
    category: 'tls',
  },
  EPROTOCOL: { kind: 'temporary', reason: 'The mail server answered with an invalid SMTP response' },
  EAUTH: { kind: 'auth', reason: 'Authentication credentials rejected by the mail server' },
  ENOAUTH: { kind: 'auth', reason: 'Authentication not possible: the mailer has no credentials' },
  ECONFIG: { kind: 'permanent', reason: 'The mail transport configuration is invalid' },
  EENVELOPE: { kind: 'permanent', reason: 'Invalid sender or recipient address' },
  EMESSAGE: { kind: 'temporary', reason: 'Message delivery failed' },
  ESTREAM: { kind: 'temporary', reason: 'The message could not be streamed to the mail server' },
  EABORT: { kind: 'temporary', reason: 'Delivery to the mail server took too long and was abandoned' },
};

const ENHANCED_RE = /^\d{3}[ -]([245])\.(\d{1,3})\.(\d{1,3})\b/;

/** The enhanced status code of a reply ("550 5.1.1 ..."), if any. */
export function enhancedCodeOf(response: string | undefined): string | undefined {
  const m = response ? ENHANCED_RE.exec(response.trim()) : null;
  return m ? `${m[1]}.${m[2]}.${m[3]}` : undefined;
}

/** The basic reply code at the start of `response`, if any. */
export function replyCodeOf(response: string | undefined): number | undefined {
  const m = response ? /^([2-5]\d\d)\b/.exec(response.trim()) : null;
  return m ? Number(m[1]) : undefined;
}

/** Human-readable text for a reply; undefined when the codes are not mapped. */
export function describeReply(responseCode: number, enhancedCode?: string): string | undefined {
  if (enhancedCode) {
    const detail = ENHANCED[enhancedCode.split('.').slice(1).join('.')];
    if (detail) return responseCode < 500 ? `Temporary failure: ${lowerFirst(detail)}` : detail;
  }
  return BASIC[responseCode];
}

function isAuthReply(code: number, enhanced: string | undefined, command: string | undefined): boolean {
  if (code < 500) return false;
  if (command?.toUpperCase().startsWith('AUTH')) return true;
  if (code === 535 || code === 534) return true;
  // 530 5.7.0 to MAIL is "authenticate first" or "STARTTLS first": configuration, not refused credentials.
  if (code === 530) return enhanced === '5.7.8';
  return enhanced === '5.7.8' || enhanced === '5.7.9';
}

/** Classifies an SMTP reply (a rejected RCPT, MAIL FROM, DATA or AUTH). */
export function classifyReply(responseCode: number, response: string, command?: string): DeliveryFailure {
  const raw = response.trim();
  const enhancedCode = enhancedCodeOf(raw);
  let kind: FailureKind;
  if (isAuthReply(responseCode, enhancedCode, command)) kind = 'auth';
  // RFC 5321: 5yz is permanent. 503 (bad sequence) says the session was in the wrong state,
  // not that the message is refused: a new connection can succeed.
  else if (responseCode >= 500 && responseCode !== 503) kind = 'permanent';
  else kind = 'temporary';
  let failedReason = describeReply(responseCode, enhancedCode) ?? raw;
  if (kind === 'auth' && !failedReason.startsWith(AUTH_REASON_PREFIX))
    failedReason = `${AUTH_REASON_PREFIX} failed: ${failedReason}`;
  const failure: DeliveryFailure = { kind, responseCode, failedReason, providerError: raw };
  if (enhancedCode) failure.enhancedCode = enhancedCode;
  // A refused login is about the mailer's credentials, not the recipient: no bounce category.
  if (kind !== 'auth')
    failure.bounceCategory = classifyBounce({
      status: enhancedCode,
      replyCode: responseCode,
      text: raw,
    }).category;
  return failure;
}

/** Every refusal of the guarded connect (a target that is or resolves to a non-public address). */
export const TARGET_REFUSED_REASON = 'Mail server is not allowed (private, loopback or reserved address)';

/**
 * Refusals and failures of the guarded connect (platform OutboundTargetError, matched by code);
 * their messages name the host, never the address.
 */
function classifyTargetError(
  e: SmtpErrorLike & { temporary?: boolean; causeCode?: string },
): DeliveryFailure | null {
  const message = e.message ?? '';
  switch (e.code) {
    case 'ETARGET_PRIVATE':
      return localFailure('permanent', TARGET_REFUSED_REASON, message);
    case 'ETARGET_UNRESOLVED':
      return localFailure(
        e.temporary ? 'temporary' : 'permanent',
        'Mail server host does not resolve',
        message,
        'dns',
      );
    case 'ETARGET_CONNECT':
      return localFailure(
        'temporary',
        e.causeCode === 'ETIMEDOUT' ? NO_REPLY.ETIMEDOUT!.reason : NO_REPLY.ECONNECTION!.reason,
        message,
        'unknown',
      );
    default:
      return null;
  }
}

/** Classifies whatever a transport threw. */
export function classifySmtpError(err: unknown): DeliveryFailure {
  const e = (typeof err === 'object' && err !== null ? err : { message: String(err) }) as SmtpErrorLike;
  const target = classifyTargetError(e);
  if (target) return target;
  const response = typeof e.response === 'string' ? e.response : undefined;
  const code = typeof e.responseCode === 'number' ? e.responseCode : replyCodeOf(response);
  if (code !== undefined && code >= 400 && response) return classifyReply(code, response, e.command);
  const known = (e.code && NO_REPLY[e.code]) || undefined;
  const message = (e.message ?? '').trim() || e.code || 'unknown error';
  if (known) {
    const failure: DeliveryFailure = { kind: known.kind, failedReason: known.reason, providerError: message };
    // Not a bounce: the mailer's credentials or configuration, or a message we could not build.
    if (known.kind === 'temporary') failure.bounceCategory = known.category ?? 'unknown';
    return failure;
  }
  // Unknown errors without a reply are network-level more often than not: retry them.
  return { kind: 'temporary', failedReason: message, providerError: message, bounceCategory: 'unknown' };
}

/**
 * A failure the send service decides itself (DNS answers, unusable mailer config, ...);
 * `bounceCategory` when it is about the recipient's mail (DNS of its domain), else absent.
 */
export function localFailure(
  kind: FailureKind,
  failedReason: string,
  providerError = '',
  bounceCategory?: BounceCategory,
): DeliveryFailure {
  return bounceCategory
    ? { kind, failedReason, providerError, bounceCategory }
    : { kind, failedReason, providerError };
}

function lowerFirst(s: string): string {
  return s.charAt(0).toLowerCase() + s.slice(1);
}
