/**
 * The one bounce classifier (docs/deliverability.md "Bounce categories"), pure and table-driven:
 * what a remote server said about one recipient -> a BounceCategory and whether the failure is
 * permanent. Used for DSNs arriving at the MX (services/inbound-smtp bounce-detect.ts), for SMTP
 * replies at send (libs/providers classify-smtp-error.ts) and nowhere else in a second copy.
 *
 * Order, and why:
 * 1. The enhanced status code (RFC 3463 subject.detail, class-independent), when the reply carries
 *    one: most codes say the category on their own (`x.1.1` no such mailbox, `x.2.2` mailbox
 *    full); some only say "security or policy" (`x.7.1`, `x.7.0`) or "routing" (`x.4.1`) and the
 *    text decides (DETAIL). A `x.7.y` status never becomes `invalid_recipient` from its text: the
 *    receiver said it refused for policy, not that the address is unknown.
 * 2. Otherwise, or when the code defers to it, the text tables (TEXT_RULES), in order: what the
 *    large mailbox providers (Gmail, Outlook/Exchange Online, Yahoo, iCloud) and MTAs (Postfix,
 *    Exim, Exchange on premises) write, and blocklist answers.
 * 3. Then the code's subject (SUBJECT: `x.1.y` address, `x.6.y` content, ...), else `unknown`:
 *    nothing is guessed, and only `invalid_recipient` ever suppresses.
 *
 * `permanent`: the status class is 5 (else the reply code is 5xx) and the action is not
 * `delayed`. Every pattern is a bounded regular expression without nested quantifiers, run over
 * text cut to MAX_BOUNCE_TEXT: linear time whatever the input.
 */
import type { BounceCategory } from './bounce-category';

export interface BounceInput {
  /** Enhanced status code (RFC 3463), e.g. `5.1.1`; read from the text when absent. */
  status?: string;
  /** Basic SMTP reply code, e.g. 550; read from the start of the text when absent. */
  replyCode?: number;
  /** The remote server's reply or the DSN's diagnostic text. */
  text: string;
  /** The DSN action (`failed`, `delayed`); a delayed delivery is never permanent. */
  action?: string;
}

export interface BounceClassification {
  category: BounceCategory;
  /** A 5.x.x status (or 5xx reply) that was not a delay: the receiver will not accept it later. */
  permanent: boolean;
}

/** Text longer than this is cut before matching (the reason is at the start of a reply). */
export const MAX_BOUNCE_TEXT = 4096;

interface TextRule {
  category: BounceCategory;
  re: RegExp;
  /** Only for temporary failures (a 4xx deferral); a 5xx with the same words is a block. */
  temporaryOnly?: boolean;
  why: string;
}

/**
 * The text tables, first match wins. The order matters where texts overlap: a sender-side
 * refusal before the recipient words it may contain, a blocklisted URL (content) before
 * blocklists of the sending IP (reputation), blocklists before deferrals (a 4xx naming Spamhaus
 * is still a block; the paced 4xx of Gmail and Outlook are told by their codes), a full mailbox
 * before size limits, DNS failures of the recipient's domain before "does not exist".
 */
export const TEXT_RULES: readonly TextRule[] = [
  {
    category: 'policy',
    re: /sender address rejected|sender domain[^\n]{0,40}(rejected|not found|does not exist)|cannot find your (reverse )?hostname|reverse (dns|hostname|lookup)|\bptr record|helo command rejected/i,
    why: 'Postfix/Exim refusing the SENDER (its address, domain, rDNS or HELO): about us, not the recipient',
  },
  {
    category: 'tls',
    re: /\btls is required|must issue a starttls|starttls (is )?required|requires? (a )?(secure|encrypted|tls) (connection|transport)|encryption (is )?required|requiretls|tls (handshake|negotiation) failed|certificate (verify|verification) failed|self[- ]signed certificate|no shared cipher/i,
    why: 'the receiver requires TLS or the TLS handshake failed (Postfix "TLS is required, but was not offered")',
  },
  {
    category: 'content',
    re: /\b(url|uri|links?|domains?) (in|of) (the |this |your )?(message|mail|body)[^\n]{0,100}(listed|black ?list|block ?list|deny ?list)|\b(dbl\.spamhaus\.org|multi\.surbl\.org|multi\.uribl\.com|uribl|surbl)\b/i,
    why: 'a URL or domain IN THE MESSAGE is on a domain blocklist (Spamhaus DBL, SURBL, URIBL): the content, not the sending IP',
  },
  {
    category: 'reputation',
    re: /spamhaus|barracuda|spamcop|\bsorbs\b|uceprotect|\bpsbl\b|mailspike|blocked using|listed (at|in|on|by)|\b(rbl|dnsbl|rbls)\b|black ?list(ed)?|block ?list(ed)?|deny ?list(ed)?|reputation|\bS3150\b|\bS3140\b|\[BL2\d\]|banned sending ip|traffic not accepted from this ip|likely unsolicited mail|unusual rate of unsolicited mail|(ip|address|host|network|range)[^\n]{0,30}(has been |is |was )?(blocked|banned)|blocked (because|due to|for) (spam|abuse|poor)|\bspam (source|sender)/i,
    why: 'the sending IP or domain is on a blocklist (Spamhaus, Barracuda, SpamCop, SORBS, "blocked using", "listed at", Outlook S3150/S3140, Yahoo [BL21]) or has poor reputation: the sender, never the address',
  },
  {
    category: 'rate_limited',
    temporaryOnly: true,
    re: /rate limit|rate-limit|too many (connections|messages|recipients|concurrent|sessions|mails?|emails?)|try again later|please retry later|temporarily (deferred|rate|throttled|limited)|deferred due to|unexpected volume|throttl|greylist|graylist|exceeded (the |a )?(rate|sending|message|connection)s? (limit|quota)|unusual rate|slow down|\[TS(S)?0\d\]/i,
    why: 'a 4xx deferral for pace (Gmail 4.7.28 "unusual rate", Outlook 4.7.650, Yahoo [TSS04], greylisting): send slower, not a block',
  },
  {
    category: 'mailbox_full',
    re: /mailbox (is )?full|full mailbox|over ?quota|quota (exceeded|exceed)|exceeded (the |its |their |his |her )?(storage|quota|mailbox)|insufficient (system )?storage|storage (allocation|limit|space)|out of (storage|space)|mailbox size limit/i,
    why: 'the mailbox exists and is full (Gmail OverQuotaTemp/"is over quota", Exchange "mailbox full"): it may empty again',
  },
  {
    category: 'content',
    re: /message content rejected|potential security issue|content (rejected|refused|filter)|spam content|\bvirus|malware|trojan|infected|prohibited attachment|attachments?[^\n]{0,40}(not allowed|blocked|prohibited|rejected)|lines too long|message (size|is too (large|big)|too (large|big))|too large|exceeds? (the )?(maximum|max|size)|size limit|\[CS01\]|(appears|looks like|considered|identified as|classified as|detected as) (to be )?spam|spam score|message (looks like|is) spam|spam message rejected/i,
    why: 'the message itself was refused: spam-like or infected content, a forbidden attachment, its size or format (Exim "message has lines too long", iCloud [CS01])',
  },
  {
    category: 'dns',
    re: /host or domain name not found|domain (name )?(not found|does not exist|doesn't exist)|name service error|nxdomain|\bno mx\b|no (mx|mail exchanger) (record|host)s?|mx records? point to non-existent hosts|unrouteable address|unroutable address|dns (lookup|resolution|error|failure|timeout|query)|host not found|could not resolve|no such domain|domain (is )?unknown|unknown domain/i,
    why: 'the recipient\'s domain has no usable DNS (no MX or address, NXDOMAIN; Exim "Unrouteable address"): may be a misconfiguration that heals',
  },
  {
    category: 'invalid_recipient',
    re: /user unknown|unknown user|unknown (recipient|mailbox|local part|address)|no such (user|mailbox|recipient|address|account|person)|(does not|doesn't|did not) exist|doesn't have an? [^\s]{1,100} account|recipientnotfound|recipient not found|(recipient|address|mailbox|user)( name)? (is )?(invalid|unknown|not valid)|invalid (recipient|address|mailbox|user)|not a valid (recipient|mailbox|user|address)|mailbox (not found|unavailable: not found|is disabled|disabled|inactive)|account (is |has been )?(disabled|inactive|suspended|closed|deactivated|deleted)|(user|address|account|mailbox) (is )?no longer (active|valid|in use|available)|recipient address rejected: access denied|address not found|bad destination mailbox|no mailbox here|mailbox unavailable: user/i,
    why: 'the address is dead: unknown user, no such mailbox, disabled account (Gmail, Outlook RecipientNotFound and 5.4.1 "Access denied", Yahoo "doesn\'t have a yahoo.com account", iCloud, Postfix, Exchange)',
  },
  {
    category: 'policy',
    re: /unauthenticated|\bdmarc\b|\bspf\b|\bdkim\b|not authori[sz]ed|authentication (is )?required|relay(ing)? (denied|not permitted|access denied)|relay not permitted|administrative prohibition|local policy|policy (violation|reasons?|rejection)|\bpolicy\b|access denied|not permitted|restricted|rejected by (the )?recipient/i,
    why: "the receiver's policy refused the sender: authentication (SPF/DKIM/DMARC), relaying, restrictions on who may write to the address",
  },
];

type Detail = BounceCategory | { text: true; otherwise: BounceCategory };
const byText = (otherwise: BounceCategory): Detail => ({ text: true, otherwise });

/**
 * RFC 3463 / RFC 5248 subject.detail codes whose meaning is known, plus the provider-specific
 * details seen at scale (Gmail x.7.28, Exchange Online x.7.5xx-7xx). Anything absent falls back
 * to SUBJECT.
 */
const DETAIL: Record<string, Detail> = {
  '1.0': byText('invalid_recipient'), // "other address status": address rejected, text may say it is the sender
  '1.1': 'invalid_recipient', // bad destination mailbox address
  '1.2': 'dns', // bad destination system address: the domain does not resolve
  '1.3': 'invalid_recipient', // bad destination mailbox address syntax
  '1.4': 'invalid_recipient', // destination mailbox address ambiguous
  '1.6': 'invalid_recipient', // destination mailbox has moved, no forwarding address
  '1.7': 'policy', // bad sender's mailbox address syntax: about us
  '1.8': 'policy', // bad sender's system address: about us
  '1.10': 'invalid_recipient', // null MX (RFC 7505): the domain accepts no mail at all
  '2.0': byText('unknown'), // "other mailbox status": often a block worded as mailbox unavailable
  '2.1': 'invalid_recipient', // mailbox disabled, not accepting messages
  '2.2': 'mailbox_full', // mailbox full
  '2.3': 'content', // message length exceeds administrative limit
  '2.4': 'unknown', // mailing list expansion problem
  '3.0': byText('unknown'),
  '3.1': 'mailbox_full', // mail system full
  '3.2': byText('unknown'), // system not accepting network messages
  '3.4': 'content', // message too big for system
  '4.0': byText('unknown'),
  '4.1': byText('unknown'), // no answer from host; Exchange Online 5.4.1 "Recipient address rejected: Access denied"
  '4.2': byText('unknown'), // bad connection
  '4.3': 'dns', // directory server failure (DNS)
  '4.4': 'dns', // unable to route: no MX or address record
  '4.6': 'unknown', // routing loop
  '4.7': byText('unknown'), // delivery time expired: the text may say why
  '5.3': 'policy', // too many recipients
  '7.7': 'content', // message integrity failure
  '7.8': 'policy', // authentication credentials invalid
  '7.9': 'policy', // authentication mechanism too weak
  '7.10': 'tls', // encryption needed
  '7.11': 'tls', // encryption required for requested authentication mechanism
  '7.20': 'policy', // no passing DKIM signature
  '7.21': 'policy', // no acceptable DKIM signature
  '7.22': 'policy', // no valid author-matched DKIM signature
  '7.23': 'policy', // SPF validation failed
  '7.24': 'policy', // SPF validation error
  '7.25': 'policy', // reverse DNS validation failed
  '7.26': 'policy', // multiple authentication checks failed (Gmail: DMARC / unauthenticated)
  '7.27': 'policy', // sender address has null MX
  '7.30': 'tls', // REQUIRETLS support required (RFC 8689)
  '7.708': 'reputation', // Exchange Online: traffic not accepted from this IP (low reputation)
  '7.705': 'reputation', // Exchange Online: tenant exceeded threshold (spam)
  '7.750': 'reputation', // Exchange Online: unregistered domain, sending blocked
};

/** By subject when the detail is not in DETAIL: the class of problem RFC 3463 names. */
const SUBJECT: Record<string, Detail> = {
  '1': byText('invalid_recipient'), // addressing
  '2': byText('unknown'), // mailbox
  '3': byText('unknown'), // mail system
  '4': byText('unknown'), // network and routing
  '5': byText('unknown'), // mail delivery protocol
  '6': 'content', // message content or media
  '7': byText('policy'), // security or policy
};

/** x.7.28 (Gmail): "unusual rate of unsolicited mail": deferred -> pace, refused -> reputation. */
function providerDetail(cls: string, detail: string): Detail | undefined {
  const [subject, num] = detail.split('.').map(Number) as [number, number];
  if (subject !== 7) return undefined;
  if (num === 28) return cls === '4' ? 'rate_limited' : 'reputation';
  // Exchange Online 4.7.500-4.7.699 "access denied, please try again later" / 4.7.650 rate limited
  if (cls === '4' && num >= 500 && num <= 699) return 'rate_limited';
  // Exchange Online 5.7.606-5.7.649: banned sending IP
  if (cls === '5' && num >= 606 && num <= 649) return 'reputation';
  return undefined;
}

/** A status field's code (not part of an IP address or a longer dotted number). */
const STATUS_RE = /(?<![\d.])([245])\.(\d{1,3})\.(\d{1,3})(?!\.?\d)/;
/** A reply's enhanced code: after its reply code at the start (`550 5.1.1`, `550-5.1.1`) or first. */
const TEXT_STATUS_RE = /^\s*(?:[245]\d\d[ -])?([245])\.(\d{1,3})\.(\d{1,3})(?!\.?\d)/;
const CODE_RE = /^\s*([245]\d\d)\b/;

export function classifyBounce(input: BounceInput): BounceClassification {
  const text = input.text.slice(0, MAX_BOUNCE_TEXT);
  const status = STATUS_RE.exec(input.status ?? '') ?? TEXT_STATUS_RE.exec(text);
  const replyCode = input.replyCode ?? Number(CODE_RE.exec(text)?.[1] ?? 0);
  const cls = status?.[1] ?? (replyCode ? String(replyCode).charAt(0) : '');
  const permanent = cls === '5' && input.action?.toLowerCase().trim() !== 'delayed';
  const category = categoryOf(status, text, permanent);
  return { category, permanent };
}

function categoryOf(status: RegExpExecArray | null, text: string, permanent: boolean): BounceCategory {
  if (!status) return fromText(text, permanent, false) ?? 'unknown';
  const [, cls, subject, num] = status as unknown as [string, string, string, string];
  const detail = `${Number(subject)}.${Number(num)}`;
  const rule =
    providerDetail(cls, detail) ?? DETAIL[detail] ?? SUBJECT[String(Number(subject))] ?? byText('unknown');
  if (typeof rule === 'string') return rule;
  return fromText(text, permanent, Number(subject) === 7) ?? rule.otherwise;
}

function fromText(text: string, permanent: boolean, policyStatus: boolean): BounceCategory | null {
  for (const rule of TEXT_RULES) {
    if (rule.temporaryOnly && permanent) continue;
    if (policyStatus && rule.category === 'invalid_recipient') continue;
    if (rule.re.test(text)) return rule.category;
  }
  return null;
}
