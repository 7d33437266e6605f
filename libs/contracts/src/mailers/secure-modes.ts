import type { SmtpSecureMode } from './types';

/** Port used when a config leaves it out: 465 for implicit TLS, else the submission port 587. */
export function defaultSmtpPort(mode: SmtpSecureMode): number {
  return mode === 'SSL' ? 465 : 587;
}

/** Basic IMAP is port 993 with implicit TLS only (docs/api/mailers.md). */
export const BASIC_IMAP_PORT = 993;
