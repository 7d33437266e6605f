/**
 * One connect-and-authenticate check of a mail server (SMTP login, IMAP login), as the API runs
 * it before storing a basic mailer: the failure kinds, the classification of the guarded
 * connect's refusals, and a reason that never holds the password (nor the resolved address).
 */
import { OutboundTargetError } from '@mailyard/platform';

/**
 * Why connecting and authenticating to a mail server failed; `host` / `unresolved`: the guarded
 * connect refused the target (DNS changed since the host was checked).
 */
export type CheckFailureKind = 'auth' | 'connect' | 'timeout' | 'tls' | 'other' | 'host' | 'unresolved';

export interface CheckFailure {
  kind: CheckFailureKind;
  reason: string;
}

export type CheckResult = { ok: true } | ({ ok: false } & CheckFailure);

/** Connection settings of a basic SMTP or IMAP mailer, with the password in clear (never logged). */
export interface ServerCredentials {
  host: string;
  port: number;
  username: string;
  password: string;
}

/** Removes the password (and its base64 forms, as in AUTH PLAIN/LOGIN) from a server or library message. */
export function scrubSecret(
  text: string,
  credentials: Pick<ServerCredentials, 'username' | 'password'>,
): string {
  const { username, password } = credentials;
  if (!password) return text;
  const forms = [
    password,
    Buffer.from(password).toString('base64'),
    Buffer.from(`\u0000${username}\u0000${password}`).toString('base64'),
  ].filter((f) => f.length >= 3);
  let out = text;
  for (const form of forms) out = out.split(form).join('***');
  return out;
}

/** Collapses a multi-line library message (OpenSSL's include source paths) to one readable line. */
export function oneLine(text: string, max = 500): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max)}…` : line;
}

/**
 * Runs one connect-and-authenticate attempt and always closes the client. Never throws: a
 * failure is classified, and its reason freed of the password and put on one line.
 */
export async function runCheck<E extends Error>(
  credentials: ServerCredentials,
  client: { connect(): Promise<unknown>; close(): void },
  classify: (err: E) => CheckFailure,
): Promise<CheckResult> {
  try {
    await client.connect();
    return { ok: true };
  } catch (err) {
    const { kind, reason } = classify(err as E);
    return { ok: false, kind, reason: oneLine(scrubSecret(reason, credentials)) };
  } finally {
    client.close();
  }
}

/** The failure of a guarded connect that refused or could not reach the target, else null. */
export function targetFailure(err: unknown): CheckFailure | null {
  if (!(err instanceof OutboundTargetError)) return null;
  if (err.code === 'ETARGET_PRIVATE') return { kind: 'host', reason: err.message };
  if (err.code === 'ETARGET_UNRESOLVED') return { kind: 'unresolved', reason: err.message };
  const kind = err.causeCode === 'ETIMEDOUT' ? 'timeout' : 'connect';
  return { kind, reason: err.message };
}
