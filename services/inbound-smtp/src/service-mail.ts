/**
 * The consumer's branch for mail to the service's own addresses (bounce domain), as named steps:
 * read (report-mime.ts) -> classify (arf-detect.ts, bounce-detect.ts; the bounce category from
 * libs/contracts classifyBounce, docs/deliverability.md "Bounce categories") -> attribute (the signed
 * address: the RCPT address, else a return path inside a report; service-address.ts) -> decide
 * the outcome (event + suppression). Nothing here is posted to an incoming webhook; the outcomes
 * are written by the caller in the message's completing transaction (libs/store feedback.ts
 * applyFeedbackIn through inboundMessages.complete), so they happen exactly once.
 *
 * | arrived at | message | outcome |
 * |---|---|---|
 * | VERP or `fbl@` | ARF complaint (abuse, fraud, virus, other) | MAIL_SPAM; address suppressed (`spam_complaint`) |
 * | VERP | bounce, category `invalid_recipient`, permanent (class hard) | MAIL_BOUNCE with `bounce_category`; address suppressed (`hard_bounce`) |
 * | VERP | any other bounce (mailbox_full, reputation, policy, content, dns, tls, rate_limited, unknown; or delayed) | MAIL_BOUNCE with `bounce_category` and the class in failed_reason; no suppression |
 * | `unsubscribe+…` | anything | address suppressed (`unsubscribed`); MAIL_UNSUBSCRIBED when newly suppressed |
 * | any | auto-reply, positive DSN, not-spam report, other mail, our own mail (`X-Is-Svc`) | dropped |
 * Whatever cannot be attributed (forged or unknown address, send deleted) is logged and dropped;
 * every message counts in `mailyard_inbound_service_mail_total{kind,outcome}`. Never throws for
 * what the message contains (database errors go back to the bus, which retries).
 */
import { type Db, type Logger, counter, isServiceSent, messageHeaderProblem } from '@mailyard/platform';
import {
  type FeedbackOutcome,
  type InboundRecipient,
  type StoredInboundMessage,
  SuppressionReason,
  type TrackedRecipient,
} from '@mailyard/store';
import { complaintReason, detectComplaint, returnPathCandidates } from './arf-detect';
import { bounceReason, classifyRecipient, detectBounce } from './bounce-detect';
import { feedbackEvent, mailtoTracking } from './feedback-event';
import { type MimeMessage, readMime } from './report-mime';
import { attributeReturnPath, resolveServiceAddress } from './service-address';

export interface ServiceMailDeps {
  db: Db;
  logger: Logger;
  /** libs/platform returnPathKey(sealer). */
  key: Buffer;
}

const handled = counter(
  'mailyard_inbound_service_mail_total',
  'Mail to the service addresses (bounces, complaints, mailto unsubscribes) by kind and outcome',
  ['kind', 'outcome'],
);

type Classified =
  | { kind: 'complaint'; report: NonNullable<ReturnType<typeof detectComplaint>> }
  | { kind: 'bounce'; verdict: Extract<ReturnType<typeof detectBounce>, { kind: 'bounce' }> }
  | { kind: 'ignored'; what: string; reason: string };

/** The outcomes to write for the message's service recipients (possibly none). */
export async function serviceMailOutcomes(
  deps: ServiceMailDeps,
  message: StoredInboundMessage,
  recipients: InboundRecipient[],
): Promise<FeedbackOutcome[]> {
  const out: FeedbackOutcome[] = [];
  let classified: Classified | undefined;
  for (const rcpt of recipients) {
    if (rcpt.service === 'unsubscribe') {
      const o = await unsubscribe(deps, message, rcpt);
      if (o) out.push(o);
      continue;
    }
    classified ??= classify(message.raw);
    const o = await reportOutcome(deps, message, rcpt, classified);
    if (o) out.push(o);
  }
  return out;
}

/**
 * read + classify, once per message. The readers are written not to throw; should one still, the
 * message is dropped as unreadable (database errors, in the other steps, go back to the bus).
 */
function classify(raw: Buffer): Classified {
  try {
    return classifyContent(raw);
  } catch (err) {
    return { kind: 'ignored', what: 'unreadable', reason: (err as Error).message };
  }
}

function classifyContent(raw: Buffer): Classified {
  // A header block the MX refuses (stored before that check): not read at all.
  const problem = messageHeaderProblem(raw);
  if (problem) return { kind: 'ignored', what: 'unreadable', reason: problem };
  // Our own outgoing mail arriving here (a loop, or someone sending it on) is never a report.
  if (isServiceSent(raw)) return { kind: 'ignored', what: 'own_mail', reason: 'carries X-Is-Svc' };
  const mail: MimeMessage = readMime(raw);
  const report = detectComplaint(mail);
  if (report) {
    return report.complaint
      ? { kind: 'complaint', report }
      : { kind: 'ignored', what: 'report', reason: `feedback type ${report.feedbackType}` };
  }
  const verdict = detectBounce(mail);
  if (verdict.kind === 'bounce') return { kind: 'bounce', verdict };
  return { kind: 'ignored', what: verdict.kind, reason: verdict.reason };
}

async function reportOutcome(
  deps: ServiceMailDeps,
  message: StoredInboundMessage,
  rcpt: InboundRecipient,
  c: Classified,
): Promise<FeedbackOutcome | null> {
  if (c.kind === 'ignored') return drop(deps, message, rcpt, c.what, 'ignored', c.reason);
  if (c.kind === 'complaint') {
    const candidates = [
      ...(rcpt.service === 'bounce' ? [rcpt.address] : []),
      ...returnPathCandidates(c.report),
    ];
    const recipient = await attributeFirst(deps, candidates);
    if (!recipient) return drop(deps, message, rcpt, 'complaint', 'unattributed', 'no signed return path');
    return recorded(deps, message, 'complaint', {
      recipient,
      event: feedbackEvent('MAIL_SPAM', recipient, complaintReason(c.report)),
      suppress: SuppressionReason.spamComplaint,
    });
  }
  // Bounces are attributed by the address they arrived at only: `fbl@` takes reports, not DSNs.
  if (rcpt.service !== 'bounce')
    return drop(deps, message, rcpt, 'bounce', 'ignored', 'bounce sent to the feedback address');
  const recipient = await attributeFirst(deps, [rcpt.address]);
  if (!recipient) return drop(deps, message, rcpt, 'bounce', 'unattributed', 'send or recipient not found');
  const v = c.verdict;
  const failure =
    v.recipients.find((r) =>
      [r.finalRecipient, r.originalRecipient].includes(recipient.email.toLowerCase()),
    ) ?? v.recipients[0]!;
  // The recipient's own failure decides (a DSN may report several with different statuses).
  const bounce = classifyRecipient(failure);
  return recorded(deps, message, `bounce_${bounce.class}`, {
    recipient,
    event: feedbackEvent('MAIL_BOUNCE', recipient, bounceReason(bounce.class, failure), {
      bounceCategory: bounce.category,
    }),
    // Only a permanent invalid_recipient (class hard) proves the address dead.
    suppress: bounce.class === 'hard' ? SuppressionReason.hardBounce : null,
  });
}

async function unsubscribe(
  deps: ServiceMailDeps,
  message: StoredInboundMessage,
  rcpt: InboundRecipient,
): Promise<FeedbackOutcome | null> {
  const resolved = await resolveServiceAddress(deps.db, deps.key, localPart(rcpt.address));
  if (resolved?.kind !== 'unsubscribe')
    return drop(deps, message, rcpt, 'unsubscribe', 'unattributed', 'send or recipient not found');
  return recorded(deps, message, 'unsubscribe', {
    recipient: resolved.recipient,
    event: feedbackEvent('MAIL_UNSUBSCRIBED', resolved.recipient, '', {
      tracking: mailtoTracking(message.receivedAt, message.remoteIp),
    }),
    suppress: SuppressionReason.unsubscribed,
  });
}

async function attributeFirst(deps: ServiceMailDeps, addresses: string[]): Promise<TrackedRecipient | null> {
  for (const address of addresses) {
    const r = await attributeReturnPath(deps.db, deps.key, address);
    if (r) return r;
  }
  return null;
}

function recorded(
  deps: ServiceMailDeps,
  message: StoredInboundMessage,
  kind: string,
  o: FeedbackOutcome,
): FeedbackOutcome {
  handled.inc({ kind, outcome: 'recorded' });
  deps.logger.info('service mail', {
    inbound_message_id: message.id,
    kind,
    event: o.event.event,
    ref_id: o.recipient.refId,
    suppress: o.suppress ?? undefined,
    bounce_category: o.event.details.bounce_category,
    failed_reason: o.event.details.failed_reason || undefined,
  });
  return o;
}

function drop(
  deps: ServiceMailDeps,
  message: StoredInboundMessage,
  rcpt: InboundRecipient,
  kind: string,
  outcome: 'ignored' | 'unattributed',
  reason: string,
): null {
  handled.inc({ kind, outcome });
  deps.logger.info('service mail dropped', {
    inbound_message_id: message.id,
    recipient: rcpt.address,
    kind,
    outcome,
    reason,
  });
  return null;
}

const localPart = (address: string) => address.slice(0, Math.max(0, address.lastIndexOf('@')));
