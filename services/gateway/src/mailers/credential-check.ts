import { HttpError } from '@mailyard/platform';

/** Why connecting and authenticating to a mail server failed. */
export type CheckFailureKind = 'auth' | 'connect' | 'timeout' | 'tls' | 'other';

export type CheckResult = { ok: true } | { ok: false; kind: CheckFailureKind; reason: string };

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

/** A failed check as the 422 envelope: a short error per kind, the server's reason in `details`. */
export function checkFailure(
  result: Exclude<CheckResult, { ok: true }>,
  texts: Record<CheckFailureKind, string>,
): HttpError {
  return new HttpError(422, texts[result.kind], result.reason);
}
