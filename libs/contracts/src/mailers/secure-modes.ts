import type { SmtpSecureMode } from './types';

/**
 * SMTP `config.secure` as nodemailer transport options:
 * Auto = plain connect, STARTTLS when the server offers it; Tls = STARTTLS required;
 * SSL = implicit TLS (port 465 style); None = never TLS, even when offered.
 */
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

/** Port used when a config leaves it out: 465 for implicit TLS, else the submission port 587. */
export function defaultSmtpPort(mode: SmtpSecureMode): number {
  return mode === 'SSL' ? 465 : 587;
}

/** Basic IMAP is port 993 with implicit TLS only (SPEC.md "Limits"). */
export const BASIC_IMAP_PORT = 993;
