/**
 * Logging in to a mailer's server before its credentials are saved or re-activated: SMTP or
 * IMAP by the protocol of its type (libs/contracts mailers/capabilities.ts), through the mailer
 * host guard, under SMTP_VERIFY_TIMEOUT_MS / IMAP_VERIFY_TIMEOUT_MS. A failed login is the 422
 * envelope with a short error per failure kind and the server's reason in `details`.
 */
import { MailerErrorText, type MailerProtocol } from '@mailyard/contracts';
import { type CheckFailureKind, type CheckResult, verifySmtp } from '@mailyard/providers';
import type { MailerConnection } from '@mailyard/store';
import { checkFailure } from './credential-check';
import { type HostGuardConfig, mailerGuard } from './host-guard';
import { verifyImap } from './imap-verify';

const FAILURE_TEXT: Record<MailerProtocol, Record<CheckFailureKind, string>> = {
  smtp: {
    auth: MailerErrorText.smtpAuthFailed,
    connect: MailerErrorText.smtpConnectFailed,
    timeout: MailerErrorText.smtpTimeout,
    tls: MailerErrorText.smtpTlsFailed,
    other: MailerErrorText.smtpFailed,
    host: MailerErrorText.hostNotAllowed,
    unresolved: MailerErrorText.hostUnresolved,
  },
  imap: {
    auth: MailerErrorText.imapAuthFailed,
    connect: MailerErrorText.imapConnectFailed,
    timeout: MailerErrorText.imapTimeout,
    tls: MailerErrorText.imapTlsFailed,
    other: MailerErrorText.imapFailed,
    host: MailerErrorText.hostNotAllowed,
    unresolved: MailerErrorText.hostUnresolved,
  },
};

export interface MailerLoginConfig extends HostGuardConfig {
  smtpTimeoutMs: number;
  imapTimeoutMs: number;
}

export type MailerLogin = (
  protocol: MailerProtocol,
  conn: MailerConnection,
  password: string,
) => Promise<void>;

/** A login check under `config`: resolves when the server accepted the credentials, else throws the 422. */
export function mailerLogin(config: MailerLoginConfig): MailerLogin {
  const guard = mailerGuard(config);
  return async (protocol, conn, password) => {
    const result: CheckResult =
      protocol === 'smtp'
        ? await verifySmtp({ ...conn, password }, config.smtpTimeoutMs, guard)
        : await verifyImap({ ...conn, password }, config.imapTimeoutMs, guard);
    if (!result.ok) throw checkFailure(result, FAILURE_TEXT[protocol]);
  };
}
