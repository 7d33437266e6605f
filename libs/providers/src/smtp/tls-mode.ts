/**
 * A mailer's `config.secure` as nodemailer's SMTP options, the one mapping of the project (the
 * send pool and the gateway's login check both use it):
 * Auto = plain connect, STARTTLS when the server offers it; Tls = STARTTLS required;
 * SSL = implicit TLS (port 465 style); None = never TLS, even when offered.
 */
import type { SmtpSecureMode } from '@mailyard/contracts';

export function smtpTlsOptions(mode: SmtpSecureMode): {
  secure: boolean;
  requireTLS: boolean;
  ignoreTLS: boolean;
} {
  switch (mode) {
    case 'SSL':
      return { secure: true, requireTLS: false, ignoreTLS: false };
    case 'Tls':
      return { secure: false, requireTLS: true, ignoreTLS: false };
    case 'None':
      return { secure: false, requireTLS: false, ignoreTLS: true };
    default:
      return { secure: false, requireTLS: false, ignoreTLS: false };
  }
}
