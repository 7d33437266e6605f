/**
 * Classifies mail that arrived at a VERP return path (libs/platform return-path.ts), pure:
 *
 * 1. RFC 3464 DSN: `multipart/report; report-type=delivery-status` (or any message with a
 *    `message/delivery-status` part): per-recipient Final-Recipient, Original-Recipient, Action,
 *    Status, Diagnostic-Code, Remote-MTA. Positive notifications (Action delivered, relayed,
 *    expanded) are not bounces. `Auto-Submitted` does not matter here: MTAs mark DSNs with it.
 * 2. Non-standard bounces: a sender such as MAILER-DAEMON / postmaster or a bounce subject, with a
 *    failure text the common MTAs write (Exchange/Outlook NDR "Remote Server returned", Postfix
 *    "said:", qmail "Remote host said:", Exim "SMTP error from remote mail server", Yahoo
 *    "554: delivery error", Gmail "The response from the remote server was:"): the reply code,
 *    enhanced status and diagnostic line are read from the text.
 * 3. Auto-replies (RFC 3834 `Auto-Submitted` other than `no`, `X-Autoreply`, `X-Autorespond`,
 *    `Precedence: auto_reply`, out-of-office / vacation subjects): not bounces.
 *
 * Classification (`classifyRecipient`): the bounce category comes from the one classifier,
 * libs/contracts classifyBounce (enhanced status, then the providers' and MTAs' texts); the class
 * is derived from it: `hard` for a permanent `invalid_recipient` (the only one that suppresses),
 * `block` for `reputation`, `policy` and `content` (refusals of the sender), `soft` for the rest
 * (mailbox full, DNS, TLS, rate limits, delays, unknown: never suppress on a guess). Every scan is a bounded regular expression over bounded text, written so that no
 * run of unbounded length is tried again from each of its positions (a whitespace run is one
 * quantifier, a line start takes `[ \t]*`, not `\s*` that runs on over the following lines, a
 * local part stops at its `@`, a tag at the next `<`): linear time (bench/inbound-hostile
 * measures the worst inputs).
 */
import {
  type BounceCategory,
  type BounceClassification,
  SUPPRESSING_BOUNCE_CATEGORY,
  classifyBounce,
} from '@mailyard/contracts';
import { type OriginalMessage, originalMessage, stripAngles } from './original-message';
import { type Headers, type MimeMessage, first, parseFields } from './report-mime';

export type BounceClass = 'hard' | 'soft' | 'block';

export interface BounceRecipient {
  finalRecipient: string;
  originalRecipient: string;
  action: string;
  /** Enhanced status code (RFC 3463), e.g. `5.1.1`; '' when none was found. */
  status: string;
  /** The remote server's reply (Diagnostic-Code without its type), '' when none. */
  diagnostic: string;
}

export type BounceVerdict =
  | {
      kind: 'bounce';
      class: BounceClass;
      /** An RFC 3464 delivery-status part was read (false: recognised from the text). */
      standard: boolean;
      recipients: BounceRecipient[];
      original: OriginalMessage | null;
    }
  | { kind: 'auto_reply'; reason: string }
  | { kind: 'not_bounce'; reason: string };

/** Text scanned for a non-standard bounce (longer bodies are cut: the failure is at the top). */
const MAX_TEXT = 64 * 1024;
const FAILED_ACTIONS = new Set(['failed', 'delayed']);

export function detectBounce(mail: MimeMessage): BounceVerdict {
  const dsn = mail.parts.find(
    (p) => p.type === 'message/delivery-status' || p.type === 'message/global-delivery-status',
  );
  if (dsn) return fromDeliveryStatus(mail, dsn.body.toString('utf8'));
  const text = bodyText(mail);
  const textual = fromText(mail, text);
  if (textual) return textual;
  const auto = autoReplyReason(mail.headers);
  if (auto) return { kind: 'auto_reply', reason: auto };
  return { kind: 'not_bounce', reason: 'no delivery status and no failure text' };
}

function fromDeliveryStatus(mail: MimeMessage, body: string): BounceVerdict {
  const blocks = body
    .slice(0, MAX_TEXT)
    .split(/\r?\n[ \t]*\r?\n/)
    .map((b) => parseFields(b, false))
    .filter((b) => b.size > 0);
  const recipients: BounceRecipient[] = blocks
    .filter((b) => b.has('action') || b.has('final-recipient'))
    .map((b) => ({
      finalRecipient: addressOf(first(b, 'final-recipient')),
      originalRecipient: addressOf(first(b, 'original-recipient')),
      action: first(b, 'action').toLowerCase().trim(),
      status: enhancedStatus(first(b, 'status')),
      diagnostic: diagnosticOf(first(b, 'diagnostic-code')),
    }));
  const failed = recipients.filter((r) => FAILED_ACTIONS.has(r.action));
  if (failed.length === 0)
    return {
      kind: 'not_bounce',
      reason: `delivery status without a failure (${recipients.map((r) => r.action).join(', ') || 'no recipients'})`,
    };
  const worst = failed[0]!;
  return {
    kind: 'bounce',
    class: classifyFailure(worst),
    standard: true,
    recipients: failed,
    original: originalMessage(mail),
  };
}

/** `rfc822; a@b` -> `a@b` (the address type is dropped; an unknown type keeps its value). */
function addressOf(field: string): string {
  const semi = field.indexOf(';');
  const value = (semi >= 0 ? field.slice(semi + 1) : field).trim();
  return stripAngles(value) || value;
}

/** `smtp; 550 5.1.1 ...` -> `550 5.1.1 ...`. */
function diagnosticOf(field: string): string {
  const m = /^\s*[a-z][a-z0-9-]*\s*;\s*/i.exec(field);
  return (m ? field.slice(m[0].length) : field).replace(/\s+/g, ' ').trim();
}

function enhancedStatus(value: string): string {
  return /\b([245]\.\d{1,3}\.\d{1,3})\b/.exec(value)?.[1] ?? '';
}

// --- non-standard bounces -----------------------------------------------------------------

const DAEMON_SENDER = /(^|[<\s"])(mailer-daemon|mail-daemon|mailerdaemon|postmaster|mdaemon)@/i;
const DAEMON_NAME = /mail delivery (system|subsystem)|mailer-daemon|microsoft outlook|postmaster/i;
const BOUNCE_SUBJECT =
  /undeliver|returned mail|delivery status notification|delivery failure|failure notice|mail delivery failed|delivery has failed|could not be delivered|non-?delivery|returned to sender|mail system error|delivery problem|delivery notification/i;
const FAILURE_TEXT =
  /permanent error|could not be delivered|couldn't be delivered|wasn't delivered|was not delivered|unable to deliver|delivery has failed|not be delivered|wasn't able to deliver|failed permanently|remote server returned|address not found|delivery to the following recipient|the following address(?:es)? failed|delivery error/i;

/** Where common MTAs put the remote reply, most specific first; group 1 is the reply. */
const REPLY_PATTERNS: RegExp[] = [
  /Remote Server returned '([^\n]{1,500})'[ \t]*$/im, // Exchange / Outlook NDR (the reply may hold quotes)
  /said:\s+([245]\d\d[^\n]{0,300}(?:\n[ \t]+[^\n]{1,300}){0,6})/i, // Postfix
  /Remote host said:\s*([^\n]{1,500})/i, // qmail
  /SMTP error from remote (?:mail server|mailer) after [^\n]{0,200}\n\s*([^\n]{1,500})/i, // Exim
  /response from the remote server was:\s*([^\n]{1,500})/i, // Gmail
  /^[ \t]*([245]\d\d[ -][245]\.\d{1,3}\.\d{1,3}\b[^\n]{0,400})/m, // a bare "550 5.1.1 ..." line
  /^[ \t]*([45]\d\d:[ \t][^\n]{1,500})/m, // Yahoo "554: delivery error: dd ..."
];

/** Where common MTAs name the failed address; group 1 is the address. */
const RECIPIENT_PATTERNS: RegExp[] = [
  /^<([^<>\s@]+@[^<>\s]+)>:/m, // Postfix, qmail, Yahoo
  /Your message to ([^\s<>@]+@[^\s<>]+) couldn't be delivered/i, // Outlook
  /wasn't delivered to ([^\s<>@]+@[^\s<>]+)/i, // Gmail
  /failed:[^\S\n]*\n\s*<?([^\s<>@]+@[^\s<>]+?)>?[^\S\n]*\n/i, // Exim
  /recipients or groups:[^\S\n]*\n\s*([^\s<>()@]+@[^\s<>()]+)/i, // Exchange
];

function fromText(mail: MimeMessage, text: string): BounceVerdict | null {
  const from = `${first(mail.headers, 'from')} ${first(mail.headers, 'sender')}`;
  const subject = first(mail.headers, 'subject');
  const looksLikeDaemon = DAEMON_SENDER.test(from) || DAEMON_NAME.test(from) || BOUNCE_SUBJECT.test(subject);
  if (!looksLikeDaemon) return null;
  const reply = matchFirst(REPLY_PATTERNS, text);
  if (!reply && !FAILURE_TEXT.test(text)) return null;
  const diagnostic = (reply ?? '')
    .replace(/\s+/g, ' ')
    .replace(/\s*\(in reply to [^)]*\)\s*$/i, '')
    .trim();
  const recipient = matchFirst(RECIPIENT_PATTERNS, text) ?? '';
  const failure: BounceRecipient = {
    finalRecipient: recipient.toLowerCase(),
    originalRecipient: '',
    action: 'failed',
    status: enhancedStatus(/\b[245]\d\d[ -]([245]\.\d{1,3}\.\d{1,3})\b/.exec(diagnostic)?.[1] ?? diagnostic),
    diagnostic,
  };
  return {
    kind: 'bounce',
    class: classifyFailure(failure),
    standard: false,
    recipients: [failure],
    original: originalMessage(mail),
  };
}

function matchFirst(patterns: RegExp[], text: string): string | null {
  for (const re of patterns) {
    const m = re.exec(text);
    if (m?.[1]) return m[1];
  }
  return null;
}

/** The human-readable text: text/plain parts, else text/html without tags; bounded. */
function bodyText(mail: MimeMessage): string {
  const plain = mail.parts.filter((p) => p.type === 'text/plain').map((p) => p.body.toString('utf8'));
  const text = plain.length
    ? plain.join('\n')
    : mail.parts
        .filter((p) => p.type === 'text/html')
        .map((p) => htmlToText(p.body.toString('utf8').slice(0, MAX_TEXT)))
        .join('\n');
  return text.slice(0, MAX_TEXT).replace(/\r\n/g, '\n');
}

function htmlToText(html: string): string {
  return html
    .replace(/<(script|style)[^<>]*>[^<]*<\/\1>/gi, '')
    .replace(/<br\s*\/?>|<\/(p|div|tr|li|h\d)>/gi, '\n')
    .replace(/<[^<>]{0,2000}>/g, '')
    .replace(/&nbsp;/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&#39;|&apos;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&');
}

// --- classification -----------------------------------------------------------------------

/** Categories that refuse the sender, not the address: `block`. */
const BLOCK_CATEGORIES: readonly BounceCategory[] = ['reputation', 'policy', 'content'];

export interface RecipientClassification extends BounceClassification {
  class: BounceClass;
}

/**
 * The category (libs/contracts classifyBounce, the one classifier) and, derived from it, the
 * class of one failed recipient (see the module comment).
 */
export function classifyRecipient(
  r: Pick<BounceRecipient, 'action' | 'status' | 'diagnostic'>,
): RecipientClassification {
  const c = classifyBounce({ status: r.status, text: r.diagnostic, action: r.action });
  const klass: BounceClass =
    c.category === SUPPRESSING_BOUNCE_CATEGORY && c.permanent
      ? 'hard'
      : BLOCK_CATEGORIES.includes(c.category)
        ? 'block'
        : 'soft';
  return { ...c, class: klass };
}

/** hard / soft / block for one failed recipient (see the module comment). */
export function classifyFailure(r: Pick<BounceRecipient, 'action' | 'status' | 'diagnostic'>): BounceClass {
  return classifyRecipient(r).class;
}

/** The event's failed_reason: class, status and the remote reply (bounded). */
export function bounceReason(klass: BounceClass, r: BounceRecipient): string {
  const label = { hard: 'Hard bounce', soft: 'Soft bounce', block: 'Blocked' }[klass];
  const delayed = r.action === 'delayed' ? ' (delivery delayed)' : '';
  const text =
    !r.status || r.diagnostic.includes(r.status) ? r.diagnostic : `${r.status} ${r.diagnostic}`.trim();
  return `${label}${delayed}: ${text || 'no diagnostic given'}`.slice(0, 1000);
}

// --- auto-replies -------------------------------------------------------------------------

const AUTO_SUBJECT =
  /^\s*(auto:|automatic reply|auto[- ]?reply|autoresponse|auto[- ]?response|out of (the )?office|ooo\b|abwesenheitsnotiz|r[ée]ponse automatique|respuesta autom[aá]tica|risposta automatica)|\b(out of (the )?office|on vacation|vacation (reply|notice|message|auto))\b/i;

/** Why the message is an auto-reply (RFC 3834 and the common non-standard markers), or null. */
export function autoReplyReason(h: Headers): string | null {
  const auto = first(h, 'auto-submitted').toLowerCase().trim();
  if (auto && !auto.startsWith('no')) return `Auto-Submitted: ${auto}`;
  for (const name of ['x-autoreply', 'x-autorespond', 'x-autoresponder', 'x-autogenerated']) {
    const v = first(h, name);
    if (v && !/^(no|false|0)$/i.test(v.trim())) return `${name}: ${v}`;
  }
  const precedence = first(h, 'precedence').toLowerCase();
  if (precedence === 'auto_reply') return 'Precedence: auto_reply';
  const subject = first(h, 'subject');
  if (AUTO_SUBJECT.test(subject)) return `subject: ${subject.slice(0, 200)}`;
  return null;
}
