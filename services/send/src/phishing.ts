import { isIP } from 'node:net';
/**
 * Outbound phishing check, run on the rendered copy before anything is sent (and before click
 * tracking would rewrite links). A flagged copy ends with a PHISHING event whose failed_reason is
 * the first rule that matched; nothing is sent and nothing is retried.
 *
 * Rules:
 * 1. Deceptive link: an anchor whose visible text shows a domain (a URL or a bare host name)
 *    while its href goes to a different site. "Same site" = equal hosts, one a subdomain of the
 *    other, or the same registrable domain (approximated without the public suffix list: the
 *    last two labels, or three under a two-letter country code with a generic second level
 *    such as co.uk or com.au).
 * 2. IP-literal link: an http(s) link whose host is an IPv4 or IPv6 address (the WHATWG URL
 *    parser also turns decimal/hex/octal host forms into IPv4).
 * 3. Punycode look-alike: a link host with an `xn--` label that decodes to letters from more
 *    than one script (Latin mixed with Cyrillic or Greek, ...) or to a label made only of
 *    Cyrillic/Greek letters that look like Latin ones. Ordinary IDNs (münchen.de, 例え.jp) pass.
 * 4. Credential harvest: a <form> with a password field.
 * 5. Blocklist: a link (HTML href/action, or a URL in the text body) to a domain on
 *    PHISHING_BLOCKLIST or a subdomain of one.
 */
import { domainToUnicode } from 'node:url';
import { Parser } from 'htmlparser2';

export interface PhishingVerdict {
  rule: 'deceptive_link' | 'ip_link' | 'punycode_lookalike' | 'credential_form' | 'blocklisted_domain';
  reason: string;
}

export interface PhishingInput {
  html?: string;
  text?: string;
}

interface Anchor {
  href: string;
  text: string;
}

interface Scan {
  anchors: Anchor[];
  /** Every URL-carrying attribute: a/area href, form action. */
  links: string[];
  passwordForm: boolean;
}

/** Runs every rule; the first match wins. Null when the content looks clean. */
export function checkPhishing(input: PhishingInput, blocklist: readonly string[]): PhishingVerdict | null {
  const scan = input.html ? scanHtml(input.html) : { anchors: [], links: [], passwordForm: false };
  const textUrls = input.text ? urlsInText(input.text) : [];
  const hosts = [...scan.links, ...textUrls].map(hostOf).filter((h): h is string => h !== null);

  const blocked =
    blocklist.length > 0 ? hosts.find((h) => blocklist.some((b) => sameOrSubdomain(h, b))) : undefined;
  if (blocked) return { rule: 'blocklisted_domain', reason: `Link to a blocklisted domain (${blocked})` };

  if (scan.passwordForm)
    return { rule: 'credential_form', reason: 'Form asks for a password (credential harvesting)' };

  const ipHost = hosts.find((h) => isIP(stripBrackets(h)) !== 0);
  if (ipHost)
    return { rule: 'ip_link', reason: `Link to an IP address instead of a domain name (${ipHost})` };

  const lookalike = hosts.find(isLookalikeHost);
  if (lookalike) {
    return {
      rule: 'punycode_lookalike',
      reason: `Link to a look-alike internationalized domain (${lookalike} = ${domainToUnicode(lookalike)})`,
    };
  }

  for (const a of scan.anchors) {
    const shown = domainShownIn(a.text);
    const target = hostOf(a.href);
    if (shown && target && !sameSite(shown, target)) {
      return { rule: 'deceptive_link', reason: `Link text shows ${shown} but the link goes to ${target}` };
    }
  }
  return null;
}

function scanHtml(html: string): Scan {
  const anchors: Anchor[] = [];
  const links: string[] = [];
  let passwordForm = false;
  const open: Array<{ href: string; text: string }> = [];
  const parser = new Parser(
    {
      onopentag(name, attrs) {
        if (name === 'a' || name === 'area') {
          const href = attrs.href?.trim();
          if (href) links.push(href);
          if (name === 'a') open.push({ href: href ?? '', text: '' });
        } else if (name === 'form') {
          if (attrs.action?.trim()) links.push(attrs.action.trim());
        } else if (name === 'input' && (attrs.type ?? '').trim().toLowerCase() === 'password') {
          // Inside a form or not, mail that asks for a password is harvesting credentials.
          passwordForm = true;
        } else if (name === 'button' || name === 'input') {
          const action = attrs.formaction?.trim();
          if (action) links.push(action);
        }
      },
      ontext(text) {
        for (const a of open) a.text += text;
      },
      onclosetag(name) {
        if (name === 'a') {
          const a = open.pop();
          if (a?.href) anchors.push({ href: a.href, text: a.text });
        }
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.write(html);
  parser.end();
  return { anchors, links, passwordForm };
}

const URL_IN_TEXT = /\bhttps?:\/\/[^\s<>"'()]+/gi;

function urlsInText(text: string): string[] {
  return text.match(URL_IN_TEXT) ?? [];
}

/** Host (lowercased, ASCII/punycode) of an http(s) URL; null for other schemes and relative links. */
function hostOf(href: string): string | null {
  const v = href.trim();
  if (!/^https?:\/\//i.test(v) && !v.startsWith('//')) return null;
  try {
    const u = new URL(v.startsWith('//') ? `https:${v}` : v);
    return u.hostname.toLowerCase().replace(/\.$/, '') || null;
  } catch {
    return null;
  }
}

function stripBrackets(h: string): string {
  return h.startsWith('[') && h.endsWith(']') ? h.slice(1, -1) : h;
}

/**
 * The domain the link text presents to the reader: a URL ("https://bank.com/login") or a bare
 * host name ("www.bank.com"). Words without a dot, or with a non-TLD ending, are not domains.
 */
function domainShownIn(text: string): string | null {
  const t = text.replace(/\s+/g, ' ').trim();
  if (!t) return null;
  const url =
    /\b(?:https?:\/\/)?((?:[\p{L}\p{N}](?:[\p{L}\p{N}-]{0,61}[\p{L}\p{N}])?\.)+[\p{L}]{2,63})(?=[/:?#\s]|$)/iu.exec(
      t,
    );
  if (!url) return null;
  // Only when the text *is* an address (possibly with a path), not a sentence mentioning one.
  const candidate = t.split(' ');
  if (candidate.length > 1) return null;
  try {
    return new URL(`http://${url[1]}`).hostname.toLowerCase();
  } catch {
    return null;
  }
}

function sameOrSubdomain(host: string, domain: string): boolean {
  return host === domain || host.endsWith(`.${domain}`);
}

const GENERIC_SECOND_LEVEL = new Set([
  'co',
  'com',
  'net',
  'org',
  'gov',
  'edu',
  'ac',
  'or',
  'ne',
  'go',
  'gob',
  'mil',
  'nic',
]);

/** Registrable domain, approximated (see the module comment). */
export function baseDomain(host: string): string {
  const labels = host.split('.');
  if (labels.length <= 2) return host;
  const tld = labels[labels.length - 1]!;
  const second = labels[labels.length - 2]!;
  const take = tld.length === 2 && GENERIC_SECOND_LEVEL.has(second) ? 3 : 2;
  return labels.slice(-take).join('.');
}

function sameSite(a: string, b: string): boolean {
  return sameOrSubdomain(a, b) || sameOrSubdomain(b, a) || baseDomain(a) === baseDomain(b);
}

/** Cyrillic and Greek letters that render like Latin letters. */
const LATIN_LOOKALIKES = new Set([
  // Cyrillic а е о р с у х і ј ѕ ԁ ӏ һ ԛ ԝ к
  ...'\u0430\u0435\u043e\u0440\u0441\u0443\u0445\u0456\u0458\u0455\u0501\u04cf\u04bb\u051b\u051d\u043a',
  // Greek ο α ρ ν υ ι κ χ ε
  ...'\u03bf\u03b1\u03c1\u03bd\u03c5\u03b9\u03ba\u03c7\u03b5',
]);

function scriptOf(ch: string): string | null {
  if (/\p{Script=Latin}/u.test(ch)) return 'Latin';
  if (/\p{Script=Cyrillic}/u.test(ch)) return 'Cyrillic';
  if (/\p{Script=Greek}/u.test(ch)) return 'Greek';
  if (/\p{Script=Armenian}/u.test(ch)) return 'Armenian';
  if (/\p{L}/u.test(ch)) return 'Other';
  return null;
}

function isLookalikeLabel(label: string): boolean {
  const letters = [...label].filter((ch) => scriptOf(ch) !== null);
  const scripts = new Set(letters.map(scriptOf));
  const confusable = scripts.has('Cyrillic') || scripts.has('Greek') || scripts.has('Armenian');
  if (scripts.has('Latin') && confusable) return true; // mixed script, e.g. "pаypal" with a Cyrillic а
  if (!scripts.has('Latin') && confusable && letters.length > 0) {
    return letters.every((ch) => LATIN_LOOKALIKES.has(ch.toLowerCase())); // whole-script, e.g. "аррӏе"
  }
  return false;
}

function isLookalikeHost(host: string): boolean {
  if (!host.split('.').some((l) => l.startsWith('xn--'))) return false;
  const unicode = domainToUnicode(host);
  if (!unicode) return true; // an xn-- label that does not even decode
  return unicode.split('.').some(isLookalikeLabel);
}
