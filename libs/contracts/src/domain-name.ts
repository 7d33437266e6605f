import { domainToASCII, domainToUnicode } from 'node:url';

const LABEL_RE = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

export interface DomainName {
  /** A-label (punycode) form, lowercase, no trailing dot: what DNS and the API key on. */
  ascii: string;
  /** The same name for display (U-labels). */
  unicode: string;
}

/**
 * Normalises a domain name as given by a user: trims, drops one trailing dot, converts IDNA
 * (UTS #46) to ASCII and lowercases. Null when it is not a registrable-looking host name: at
 * least two labels, letters/digits/hyphens, at most 63 per label and 253 in all, and a
 * non-numeric top-level label (so IP addresses are refused).
 */
export function normalizeDomainName(input: string): DomainName | null {
  const trimmed = input.trim().replace(/\.$/, '');
  if (!trimmed || trimmed.length > 1024 || /[\s/:@\\?#%*_]/.test(trimmed)) return null;
  const ascii = domainToASCII(trimmed).toLowerCase();
  if (!ascii || ascii.length > 253) return null;
  const labels = ascii.split('.');
  if (labels.length < 2 || !labels.every((l) => LABEL_RE.test(l))) return null;
  if (/^\d+$/.test(labels[labels.length - 1]!)) return null;
  return { ascii, unicode: domainToUnicode(ascii) };
}
