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
 * Priority when several match: blocklist, credential form, IP link, look-alike, deceptive link.
 *
 * Linear and budgeted, whatever the content (a tenant controls it):
 * - HTML goes through htmlparser2's Tokenizer (a streaming state machine), not its Parser, whose
 *   open-element stack costs O(depth) per tag. Anchors do not nest (an `<a>` start tag closes the
 *   open one, as in the HTML parsing algorithm), so each text node counts for at most one link,
 *   and only the first LINK_TEXT_MAX characters of a link's text are kept.
 * - Every link is judged when it is found (host rules once per distinct host); the scan stops at
 *   a blocklisted link, which no other rule outranks.
 * - The work is done in slices of SLICE_CHARS characters; checkPhishingAsync yields to the event
 *   loop between slices, so a large body never holds the process (health checks, other copies).
 * - Budget: more than `maxLinks` links (PHISHING_MAX_LINKS), or more than `budgetMs` of scanning
 *   time (PHISHING_CHECK_BUDGET_MS, the slices' own time, not time spent waiting), ends the scan
 *   with the `too_complex` verdict: the copy is refused like any phishing verdict (final, never
 *   retried), so a copy that cannot be checked is never sent and never checked again. A rule that
 *   already matched before the budget ran out is reported instead.
 */
import { isIP } from 'node:net';
import { domainToUnicode } from 'node:url';
import { Tokenizer } from 'htmlparser2';

export type PhishingRule =
  | 'deceptive_link'
  | 'ip_link'
  | 'punycode_lookalike'
  | 'credential_form'
  | 'blocklisted_domain'
  | 'too_complex';

export interface PhishingVerdict {
  rule: PhishingRule;
  reason: string;
}

export interface PhishingInput {
  html?: string;
  text?: string;
}

export interface PhishingOptions {
  blocklist: readonly string[];
  /** Scanning time (ms, summed over slices) before the verdict is `too_complex`. */
  budgetMs?: number;
  /** Links (href, action, formaction, URLs in the text) before the verdict is `too_complex`. */
  maxLinks?: number;
  /** Clock for the time budget, in ms (tests inject one). */
  now?: () => number;
}

export const PHISHING_DEFAULTS = { budgetMs: 2_000, maxLinks: 10_000 } as const;

/** Characters of input handled per slice (between two yields of checkPhishingAsync). */
export const SLICE_CHARS = 64 * 1024;
/** Characters of a link's visible text that are kept (a host name is at most 253). */
export const LINK_TEXT_MAX = 1024;

const PRIORITY: PhishingRule[] = [
  'blocklisted_domain',
  'credential_form',
  'ip_link',
  'punycode_lookalike',
  'deceptive_link',
];

/** Runs every rule synchronously; the first match wins. Null when the content looks clean. */
export function checkPhishing(
  input: PhishingInput,
  options: readonly string[] | PhishingOptions,
): PhishingVerdict | null {
  const scan = new PhishingScan(
    input,
    Array.isArray(options) ? { blocklist: options } : (options as PhishingOptions),
  );
  while (!scan.step(SLICE_CHARS)) {
    // next slice
  }
  return scan.verdict();
}

/**
 * Same verdict as checkPhishing (the same steps), yielding to the event loop once a slice's worth
 * of characters was handled since the last yield: a small copy's phases (its HTML, the end of the
 * HTML, its text) run in one turn instead of one turn each (three setImmediate round trips per
 * copy saved), a large one still yields every SLICE_CHARS.
 */
export async function checkPhishingAsync(
  input: PhishingInput,
  options: PhishingOptions,
): Promise<PhishingVerdict | null> {
  const scan = new PhishingScan(input, options);
  let yieldedAt = 0;
  while (!scan.step(SLICE_CHARS)) {
    if (scan.handled - yieldedAt < SLICE_CHARS) continue;
    yieldedAt = scan.handled;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  return scan.verdict();
}

interface OpenAnchor {
  href: string;
  text: LinkText;
}

/** What of a tag the rules need: its name and the URL-carrying attributes. */
const WANTED_ATTRIBUTES = new Set(['href', 'action', 'type', 'formaction']);

/** The incremental scan behind checkPhishing / checkPhishingAsync. */
export class PhishingScan {
  private readonly found = new Map<PhishingRule, PhishingVerdict>();
  private readonly seenHosts = new Set<string>();
  private readonly blocklist: readonly string[];
  private readonly budgetMs: number;
  private readonly maxLinks: number;
  private readonly now: () => number;
  private readonly html: string;
  private readonly text: string;
  private readonly tokenizer: Tokenizer;
  private htmlPos = 0;
  private htmlEnded = false;
  private textPos = 0;
  private links = 0;
  private spentMs = 0;
  private stopped = false;
  // Tokenizer state: the tag being read and its wanted attributes.
  private tag = '';
  private attrs: Record<string, string> = {};
  private attrName: string | null = null;
  private attrValue = '';
  private anchor: OpenAnchor | null = null;

  constructor(input: PhishingInput, o: PhishingOptions) {
    this.blocklist = o.blocklist;
    this.budgetMs = o.budgetMs ?? PHISHING_DEFAULTS.budgetMs;
    this.maxLinks = o.maxLinks ?? PHISHING_DEFAULTS.maxLinks;
    this.now = o.now ?? (() => performance.now());
    this.html = input.html ?? '';
    this.text = input.text ?? '';
    const html = this.html;
    const lower = (start: number, end: number, max: number) =>
      end - start <= max ? html.slice(start, end).toLowerCase() : '';
    this.tokenizer = new Tokenizer(
      { decodeEntities: true },
      {
        onopentagname: (start, end) => {
          this.tag = lower(start, end, 10);
          this.attrs = {};
          this.attrName = null;
        },
        onattribname: (start, end) => {
          const name = lower(start, end, 10);
          this.attrName = WANTED_ATTRIBUTES.has(name) && !Object.hasOwn(this.attrs, name) ? name : null;
          this.attrValue = '';
        },
        onattribdata: (start, end) => {
          if (this.attrName) this.attrValue += html.slice(start, end);
        },
        onattribentity: (cp) => {
          if (this.attrName) this.attrValue += String.fromCodePoint(cp);
        },
        onattribend: () => {
          if (this.attrName) this.attrs[this.attrName] = this.attrValue;
          this.attrName = null;
          this.attrValue = '';
        },
        onopentagend: () => this.openTag(),
        onselfclosingtag: () => this.openTag(),
        onclosetag: (start, end) => {
          if (lower(start, end, 1) === 'a') this.closeAnchor();
        },
        ontext: (start, end) => this.anchor?.text.push(html, start, end),
        ontextentity: (cp) => {
          if (this.anchor) {
            const ch = String.fromCodePoint(cp);
            this.anchor.text.push(ch, 0, ch.length);
          }
        },
        oncdata() {},
        oncomment() {},
        ondeclaration() {},
        onprocessinginstruction() {},
        onend: () => this.closeAnchor(),
      },
    );
  }

  /** Characters of the HTML and the text scanned so far. */
  get handled(): number {
    return this.htmlPos + this.textPos;
  }

  /** Scans up to `chars` more characters; true when the scan is over. */
  step(chars: number): boolean {
    if (this.stopped) return true;
    const t0 = this.now();
    if (this.htmlPos < this.html.length) {
      const end = Math.min(this.html.length, this.htmlPos + chars);
      this.tokenizer.write(this.html.slice(this.htmlPos, end));
      this.htmlPos = end;
    } else if (!this.htmlEnded) {
      this.htmlEnded = true;
      this.tokenizer.end();
    } else if (this.textPos < this.text.length) {
      this.scanText(chars);
    } else {
      this.stopped = true;
    }
    this.spentMs += this.now() - t0;
    if (!this.stopped && this.spentMs > this.budgetMs) {
      this.tooComplex(`the check exceeded its ${this.budgetMs} ms budget`);
    }
    return this.stopped;
  }

  /** The verdict so far (final once step returned true). */
  verdict(): PhishingVerdict | null {
    for (const rule of PRIORITY) {
      const v = this.found.get(rule);
      if (v) return v;
    }
    return this.found.get('too_complex') ?? null;
  }

  private tooComplex(why: string): void {
    this.found.set('too_complex', {
      rule: 'too_complex',
      reason: `Content could not be checked for phishing: ${why}`,
    });
    this.stopped = true;
  }

  private match(v: PhishingVerdict): void {
    if (!this.found.has(v.rule)) this.found.set(v.rule, v);
    if (v.rule === 'blocklisted_domain') this.stopped = true; // nothing outranks it
  }

  private openTag(): void {
    const { tag, attrs } = this;
    if (tag === 'a' || tag === 'area') {
      const href = attrs.href?.trim();
      if (href) this.link(href);
      if (tag === 'a') {
        this.closeAnchor(); // anchors do not nest
        this.anchor = { href: href ?? '', text: new LinkText() };
      }
    } else if (tag === 'form') {
      const action = attrs.action?.trim();
      if (action) this.link(action);
    } else if (tag === 'input' && (attrs.type ?? '').trim().toLowerCase() === 'password') {
      // Inside a form or not, mail that asks for a password is harvesting credentials.
      this.match({ rule: 'credential_form', reason: 'Form asks for a password (credential harvesting)' });
    } else if (tag === 'button' || tag === 'input') {
      const action = attrs.formaction?.trim();
      if (action) this.link(action);
    }
  }

  private closeAnchor(): void {
    const a = this.anchor;
    this.anchor = null;
    if (!a?.href || this.found.has('deceptive_link')) return;
    const shown = a.text.shownDomain();
    const target = shown ? hostOf(a.href) : null;
    if (shown && target && !sameSite(shown, target)) {
      this.match({
        rule: 'deceptive_link',
        reason: `Link text shows ${shown} but the link goes to ${target}`,
      });
    }
  }

  /** A URL found in an attribute or in the text body: the host rules, once per distinct host. */
  private link(url: string): void {
    if (this.stopped) return;
    if (++this.links > this.maxLinks) {
      this.tooComplex(`more than ${this.maxLinks} links`);
      return;
    }
    const host = hostOf(url);
    if (host === null || this.seenHosts.has(host)) return;
    this.seenHosts.add(host);
    const blocked = this.blocklist.some((b) => sameOrSubdomain(host, b));
    if (blocked) {
      this.match({ rule: 'blocklisted_domain', reason: `Link to a blocklisted domain (${host})` });
      return;
    }
    if (isIP(stripBrackets(host)) !== 0) {
      this.match({ rule: 'ip_link', reason: `Link to an IP address instead of a domain name (${host})` });
    } else if (isLookalikeHost(host)) {
      this.match({
        rule: 'punycode_lookalike',
        reason: `Link to a look-alike internationalized domain (${host} = ${domainToUnicode(host)})`,
      });
    }
  }

  /** URLs in the text body, a slice at a time; slices end at a character no URL contains. */
  private scanText(chars: number): void {
    const text = this.text;
    let end = Math.min(text.length, this.textPos + chars);
    if (end < text.length) {
      URL_END.lastIndex = end;
      const m = URL_END.exec(text);
      end = m ? m.index : text.length;
    }
    const slice = text.slice(this.textPos, end);
    this.textPos = end;
    for (const m of slice.matchAll(URL_IN_TEXT)) {
      this.link(m[0]);
      if (this.stopped) return;
    }
  }
}

const URL_IN_TEXT = /\bhttps?:\/\/[^\s<>"'()]+/gi;
const URL_END = /[\s<>"'()]/g;

/** JavaScript's \s, by code unit. */
function isSpace(c: number): boolean {
  if (c <= 32) return c === 32 || (c >= 9 && c <= 13);
  if (c < 160) return false;
  return (
    c === 160 ||
    c === 5760 ||
    (c >= 8192 && c <= 8202) ||
    c === 8232 ||
    c === 8233 ||
    c === 8239 ||
    c === 8287 ||
    c === 12288 ||
    c === 65279
  );
}

/**
 * A link's visible text, kept only as far as the deceptive-link rule needs it: the text counts
 * only when it is one word (an address, possibly with a path), so the first LINK_TEXT_MAX
 * characters of that word are kept and a second word ends the collection. Linear in the text.
 */
export class LinkText {
  private word = '';
  private started = false;
  private gap = false;
  private words2 = false;
  private truncated = false;

  push(s: string, from: number, to: number): void {
    let i = from;
    while (i < to && !this.words2) {
      let j = i;
      while (j < to && isSpace(s.charCodeAt(j))) j++;
      if (j > i && this.started) this.gap = true;
      if (j >= to) return;
      if (this.gap) {
        this.words2 = true; // a sentence, not an address
        return;
      }
      let k = j;
      while (k < to && !isSpace(s.charCodeAt(k))) k++;
      this.started = true;
      const room = LINK_TEXT_MAX - this.word.length;
      if (room > 0) this.word += s.slice(j, Math.min(k, j + room));
      if (k - j > room) this.truncated = true;
      i = k;
    }
  }

  /** The domain the text presents to the reader, if it is one address. */
  shownDomain(): string | null {
    if (this.words2 || !this.started) return null;
    return domainShownIn(this.word, this.truncated);
  }
}

/** Characters a host name is made of (labels and dots). */
const HOST_RUN = /[\p{L}\p{N}.-]+/gu;
/** A host name at the end of a run of host characters (at most 253 of them are looked at). */
const HOST_AT_END = /\b((?:[\p{L}\p{N}](?:[\p{L}\p{N}-]{0,61}[\p{L}\p{N}])?\.)+[\p{L}]{2,63})$/iu;
const MAX_HOST = 253;

/**
 * The domain a one-word link text shows: a URL ("https://bank.com/login") or a bare host name
 * ("www.bank.com"): the first run of host characters that ends in a host name and is followed by
 * the end of the text or one of `/ : ? #`. Runs are looked at only in their last 253 characters,
 * so the work is linear in the text. Words with a non-TLD ending are not domains.
 */
function domainShownIn(word: string, truncated: boolean): string | null {
  for (const run of word.matchAll(HOST_RUN)) {
    const end = run.index + run[0].length;
    const next = word.charAt(end);
    if (end === word.length ? truncated : !'/:?#'.includes(next)) continue;
    const tail = run[0].length > MAX_HOST ? run[0].slice(-MAX_HOST) : run[0];
    const m = HOST_AT_END.exec(tail);
    if (!m) continue;
    try {
      return new URL(`http://${m[1]}`).hostname.toLowerCase();
    } catch {
      return null;
    }
  }
  return null;
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
