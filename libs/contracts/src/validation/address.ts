import { domainToASCII } from 'node:url';

/** RFC 5322 dot-atom local part (atext runs separated by single dots). */
const DOT_ATOM_LOCAL = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
/** RFC 5322 quoted-string local part: qtext or quoted-pairs of visible characters and space. */
// Quoted local parts, without < and > (nodemailer refuses those in an envelope, failing every
// recipient of the message).
const QUOTED_LOCAL = /^"(?:[\x20\x21\x23-\x3B\x3D\x3F-\x5B\x5D-\x7E]|\\[\x20-\x3B\x3D\x3F-\x7E])*"$/;
/** Before IDNA: letters, marks and digits of any script, hyphens, and the dots IDNA accepts. */
const RAW_DOMAIN = /^[\p{L}\p{M}\p{N}.\u3002\uFF0E\uFF61-]+$/u;
/** After IDNA: an LDH label of 1 to 63 characters. */
const LDH_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

export const MAX_LOCAL_PART = 64;
export const MAX_ADDRESS = 254;
export const MAX_DOMAIN = 253;

/**
 * Recent answers of normalizeDomain (a pure function; emptied when RECENT_DOMAINS are held): a send names the same
 * few domains again and again, and each answer costs a Unicode regex test, the IDNA conversion
 * and a test per label (about 1 µs per address; bench/history/05-2026-11-27-gateway-chain-the-send-route-s-steps-and-three-cuts.md).
 */
const RECENT_DOMAINS = 1_000;
const recentDomains = new Map<string, string | null>();

/**
 * Normalizes a host name to its lowercase ASCII (IDNA/punycode) form: `Bücher.Example` ->
 * `xn--bcher-kva.example`. Requires at least two LDH labels and a non-numeric last label
 * (no IP literals, no single-label hosts). Returns null when it is not such a domain.
 */
export function normalizeDomain(raw: string): string | null {
  if (typeof raw !== 'string') return null;
  const known = recentDomains.get(raw);
  if (known !== undefined) return known;
  const domain = normalizeDomainUncached(raw);
  // Bounded: a body of 1,000 new domains cannot grow it; short names only (real domains).
  if (raw.length <= MAX_DOMAIN) {
    if (recentDomains.size >= RECENT_DOMAINS) recentDomains.clear();
    recentDomains.set(raw, domain);
  }
  return domain;
}

function normalizeDomainUncached(raw: string): string | null {
  if (raw.length === 0 || raw.length > 1024 || !RAW_DOMAIN.test(raw)) return null;
  const ascii = domainToASCII(raw);
  if (!ascii || ascii.length > MAX_DOMAIN) return null;
  const labels = ascii.split('.');
  if (labels.length < 2 || !labels.every((l) => LDH_LABEL.test(l))) return null;
  if (/^[0-9]+$/.test(labels[labels.length - 1]!)) return null;
  return ascii;
}

export interface ParsedAddress {
  /** `local@ascii-domain`: the local part as given, the domain normalized. */
  email: string;
  local: string;
  domain: string;
}

/**
 * Parses a bare RFC 5322 addr-spec (no display name, no comments, no surrounding spaces):
 * a dot-atom or quoted-string local part of ASCII (at most 64 characters) and an IDNA domain
 * (see normalizeDomain), at most 254 characters in all. Returns null when invalid.
 */
export function parseAddress(input: string): ParsedAddress | null {
  if (typeof input !== 'string' || input.length > 1024) return null;
  const at = input.lastIndexOf('@');
  if (at <= 0) return null;
  const local = input.slice(0, at);
  if (local.length > MAX_LOCAL_PART || !(DOT_ATOM_LOCAL.test(local) || QUOTED_LOCAL.test(local))) return null;
  const domain = normalizeDomain(input.slice(at + 1));
  if (!domain) return null;
  const email = `${local}@${domain}`;
  return email.length > MAX_ADDRESS ? null : { email, local, domain };
}

/** The key two addresses are compared by (duplicates, suppressions, substitutions): lowercase. */
export function addressKey(email: string): string {
  return email.toLowerCase();
}

/** The (normalized) domain of a normalized address. */
export function domainOf(email: string): string {
  return email.slice(email.lastIndexOf('@') + 1);
}

/** True when `domain` is `parent` or one of its subdomains (both normalized). */
export function isDomainOrSubdomain(domain: string, parent: string): boolean {
  const d = domain.toLowerCase();
  const p = parent.toLowerCase();
  return d === p || d.endsWith(`.${p}`);
}
