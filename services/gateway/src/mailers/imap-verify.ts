import type { GuardOptions } from '@mailyard/platform';
import {
  ImapDeadlineError,
  imapLoginDeadlineMs,
  isImapLimitError,
  openImapConnection,
  runCheck,
  targetFailure,
} from '@mailyard/providers';
import type { CheckFailure, CheckResult, ServerCredentials } from '@mailyard/providers';

const TLS_CODES = /SSL|TLS|CERT|certificate|self.signed/i;
const CONNECT_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
]);
const TIMEOUT_CODES = new Set(['CONNECT_TIMEOUT', 'GREETING_TIMEOUT', 'ETIMEOUT', 'ETIMEDOUT']);

/**
 * Connects to the IMAP server with implicit TLS (basic IMAP is port 993 SSL only), logs in and
 * out. Never throws; the reason never holds the password nor the resolved address. The
 * connection is the one every IMAP client uses (libs/providers openImapConnection: the guarded
 * connect, the certificate checked against the host name, parser bounds of a login check), so a
 * hostile server can neither make the check hold more than a few KB (a huge literal or an
 * endless line ends it as `other`) nor last longer than three times `timeoutMs` in all (a
 * server that keeps talking and never answers the login is a `timeout`). The server
 * certificate must be trusted (public CAs, or NODE_EXTRA_CA_CERTS).
 */
export async function verifyImap(
  credentials: ServerCredentials,
  timeoutMs: number,
  guard: GuardOptions,
): Promise<CheckResult> {
  let conn: Awaited<ReturnType<typeof openImapConnection>>;
  try {
    conn = await openImapConnection(credentials, {
      guard,
      timeoutMs,
      socketTimeoutMs: timeoutMs * 3,
      maxMessageBytes: null,
    });
  } catch (err) {
    const failure = targetFailure(err);
    if (failure) return { ok: false, ...failure };
    throw err;
  }
  const { client, address } = conn;
  const check = { connect: () => conn.login(), close: () => client.close() };
  return runCheck(credentials, check, (err: ImapError) => {
    const failure = classify(conn.limitError() ?? err, credentials, timeoutMs);
    // imapflow's messages name the address it connected to; the tenant sees the host only.
    return { ...failure, reason: failure.reason.split(address).join(credentials.host) };
  });
}

type ImapError = Error & {
  code?: string;
  responseText?: string;
  authenticationFailed?: boolean;
  serverResponseCode?: string;
};

function classify(err: ImapError, c: ServerCredentials, timeoutMs: number): CheckFailure {
  const where = `${c.host}:${c.port}`;
  if (err.authenticationFailed) {
    const code = err.serverResponseCode ? `[${err.serverResponseCode}] ` : '';
    return { kind: 'auth', reason: `${code}${err.responseText ?? err.message}` };
  }
  if (err instanceof ImapDeadlineError)
    return {
      kind: 'timeout',
      reason: `${where} did not finish the login within ${imapLoginDeadlineMs(timeoutMs)} ms`,
    };
  if (isImapLimitError(err))
    return { kind: 'other', reason: `${where} sent a response over the limit: ${err.message} (${err.code})` };
  const code = err.code ?? '';
  if (TIMEOUT_CODES.has(code))
    return { kind: 'timeout', reason: `${where} did not answer within ${timeoutMs} ms (${code})` };
  if (CONNECT_CODES.has(code)) return { kind: 'connect', reason: `${where}: ${err.message}` };
  if (TLS_CODES.test(code) || TLS_CODES.test(err.message))
    return { kind: 'tls', reason: `${where}: ${err.message} (${code})` };
  return { kind: 'other', reason: `${where}: ${err.responseText ?? err.message}` };
}
