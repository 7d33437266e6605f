/**
 * The SMTP login check of a mailer (the API runs it before storing an smtp / basic_smtp mailer).
 */
import type { SmtpSecureMode } from '@mailyard/contracts';
import { type GuardOptions, guardedConnect } from '@mailyard/platform';
import nodemailer from 'nodemailer';
import {
  type CheckFailure,
  type CheckResult,
  type ServerCredentials,
  runCheck,
  targetFailure,
} from '../credential-check';
import { smtpTlsOptions } from './tls-mode';

export interface SmtpSettings extends ServerCredentials {
  secure: SmtpSecureMode;
}

const TLS_CODES = /SSL|TLS|CERT|certificate|self.signed|wrong version number|handshake/i;

/**
 * Connects to the SMTP server through the guarded connect (resolved once, checked, connected to
 * the checked address; the name only for TLS), negotiates TLS per `secure` and authenticates
 * (nodemailer's verify()), every phase bounded by `timeoutMs`. Never throws; the reason never
 * holds the password nor the address the host resolved to.
 */
export async function verifySmtp(
  settings: SmtpSettings,
  timeoutMs: number,
  guard: GuardOptions,
): Promise<CheckResult> {
  const transport = nodemailer.createTransport({
    getSocket: (_options, callback) => {
      guardedConnect({ ...guard, host: settings.host, port: settings.port, timeoutMs }).then(
        (connection) => callback(null, { connection }),
        (err: Error) => callback(err, undefined as never),
      );
    },
    host: settings.host,
    port: settings.port,
    ...smtpTlsOptions(settings.secure),
    auth: { user: settings.username, pass: settings.password },
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
    dnsTimeout: timeoutMs,
    logger: false,
    debug: false,
  });
  const client = { connect: () => transport.verify(), close: () => transport.close() };
  return runCheck(settings, client, (err: SmtpError) => classify(err, settings, timeoutMs));
}

type SmtpError = Error & { code?: string; response?: string; command?: string };

function classify(err: SmtpError, s: SmtpSettings, timeoutMs: number): CheckFailure {
  const target = targetFailure(err);
  if (target) return target;
  const where = `${s.host}:${s.port}`;
  switch (err.code) {
    case 'EAUTH':
      return { kind: 'auth', reason: err.response ?? err.message };
    case 'ETLS':
      return { kind: 'tls', reason: `${where}: ${err.message}` };
    case 'ETIMEDOUT': {
      const hint = s.secure !== 'SSL' && s.port === 465 ? '; port 465 usually needs secure "SSL"' : '';
      return {
        kind: 'timeout',
        reason: `${where} did not answer within ${timeoutMs} ms (${err.command ?? 'CONN'})${hint}`,
      };
    }
    case 'EDNS':
    case 'ECONNECTION':
      return { kind: 'connect', reason: `${where}: ${err.message}` };
    case 'ESOCKET':
      return TLS_CODES.test(err.message)
        ? { kind: 'tls', reason: `${where}: ${err.message}` }
        : { kind: 'connect', reason: `${where}: ${err.message}` };
    default:
      return { kind: 'other', reason: `${where}: ${err.response ?? err.message}` };
  }
}
