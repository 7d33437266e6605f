import type { GuardOptions } from '@mailyard/platform';
import {
  type CheckFailure,
  type CheckResult,
  type ImapFailure,
  type ServerCredentials,
  imapLoginDeadlineMs,
  openImapConnection,
  runCheck,
  targetFailure,
} from '@mailyard/providers';

/**
 * Connects to the IMAP server with implicit TLS (basic IMAP is port 993 SSL only), logs in and
 * out. Never throws; the reason never holds the password nor the resolved address. The
 * connection is the one every IMAP client uses (libs/providers openImapConnection: the guarded
 * connect, the certificate checked against the host name, parser bounds of a login check), so a
 * hostile server can neither make the check hold more than a few KB (a huge literal or an
 * endless line ends it as `other`) nor last longer than three times `timeoutMs` in all (a
 * server that keeps talking and never answers the login is a `timeout`). The server
 * certificate must be trusted (public CAs, or NODE_EXTRA_CA_CERTS). What a failure means is the
 * one IMAP classifier's (libs/providers classifyImapError, through the connection's failureOf);
 * this words each kind for the tenant.
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
  const check = { connect: () => conn.login(), close: () => conn.client.close() };
  return runCheck(credentials, check, (err: Error) =>
    checkFailure(conn.failureOf(err), credentials, timeoutMs),
  );
}

function checkFailure(f: ImapFailure, c: ServerCredentials, timeoutMs: number): CheckFailure {
  const where = `${c.host}:${c.port}`;
  switch (f.kind) {
    case 'auth':
      return { kind: 'auth', reason: `${f.serverResponseCode ? `[${f.serverResponseCode}] ` : ''}${f.text}` };
    case 'deadline':
      return {
        kind: 'timeout',
        reason: `${where} did not finish the login within ${imapLoginDeadlineMs(timeoutMs)} ms`,
      };
    case 'over-limit':
      return { kind: 'other', reason: `${where} sent a response over the limit: ${f.message} (${f.code})` };
    case 'timeout':
      return { kind: 'timeout', reason: `${where} did not answer within ${timeoutMs} ms (${f.code})` };
    case 'unreachable':
    case 'closed':
      return { kind: 'connect', reason: `${where}: ${f.message}` };
    case 'tls':
      return { kind: 'tls', reason: `${where}: ${f.message} (${f.code})` };
    default:
      return { kind: 'other', reason: `${where}: ${f.text}` };
  }
}
