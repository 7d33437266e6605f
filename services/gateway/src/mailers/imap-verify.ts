import { isIP } from 'node:net';
import { type GuardOptions, normalizeHost, resolveGuarded } from '@mailyard/platform';
import { ImapFlow } from 'imapflow';
import {
  type CheckFailure,
  type CheckResult,
  type ServerCredentials,
  runCheck,
  targetFailure,
} from './credential-check';

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
 * out, every phase bounded by `timeoutMs`. Never throws; the reason never holds the password.
 * The host is resolved once and checked (resolveGuarded); imapflow connects to that address with
 * the host name as TLS server name, so the certificate is checked against the name. The server
 * certificate must be trusted (public CAs, or NODE_EXTRA_CA_CERTS).
 */
export async function verifyImap(
  credentials: ServerCredentials,
  timeoutMs: number,
  guard: GuardOptions,
): Promise<CheckResult> {
  let address: string;
  try {
    address = (await resolveGuarded(credentials.host, guard)).address;
  } catch (err) {
    const failure = targetFailure(err);
    if (failure) return { ok: false, ...failure };
    throw err;
  }
  const name = normalizeHost(credentials.host);
  const client = new ImapFlow({
    host: address,
    ...(isIP(name) ? {} : { servername: name }),
    port: credentials.port,
    secure: true,
    auth: { user: credentials.username, pass: credentials.password },
    logger: false,
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs * 3,
    disableAutoIdle: true,
    verifyOnly: true,
  });
  // Errors after connect() settled (a socket closing late) must not become unhandled events.
  client.on('error', () => {});
  return runCheck(credentials, client, (err: ImapError) => {
    const failure = classify(err, credentials, timeoutMs);
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
  const code = err.code ?? '';
  if (TIMEOUT_CODES.has(code))
    return { kind: 'timeout', reason: `${where} did not answer within ${timeoutMs} ms (${code})` };
  if (CONNECT_CODES.has(code)) return { kind: 'connect', reason: `${where}: ${err.message}` };
  if (TLS_CODES.test(code) || TLS_CODES.test(err.message))
    return { kind: 'tls', reason: `${where}: ${err.message} (${code})` };
  return { kind: 'other', reason: `${where}: ${err.responseText ?? err.message}` };
}
