/**
 * Reads an ARF feedback report (RFC 5965), pure: `multipart/report; report-type=feedback-report`
 * with a `message/feedback-report` part (any message carrying such a part is read, as some
 * reporters mislabel the report type). From the report: Feedback-Type, User-Agent, Version,
 * Original-Mail-From (the envelope sender of the reported mail: our VERP address),
 * Original-Rcpt-To (often redacted or absent), Arrival-Date, Source-IP, Reported-Domain; from
 * the third part (`message/rfc822` or `text/rfc822-headers`) the original's headers, among them
 * its Return-Path and `X-Is-Svc` (original-message.ts).
 *
 * A complaint is a report whose Feedback-Type is `abuse`, `fraud`, `virus` or `other` (RFC 5965
 * section 7.3); `not-spam` (RFC 6650) and `auth-failure` (RFC 6591) reports are not complaints
 * and are returned with `complaint: false`.
 */
import { type OriginalMessage, originalMessage, stripAngles } from './original-message';
import { type MimeMessage, first, parseFields } from './report-mime';

export interface FeedbackReport {
  kind: 'feedback';
  /** Lowercase Feedback-Type (`abuse` when the report has none: RFC 5965 requires one). */
  feedbackType: string;
  complaint: boolean;
  userAgent: string;
  originalMailFrom: string;
  originalRcptTo: string[];
  arrivalDate: string;
  sourceIp: string;
  reportedDomain: string;
  original: OriginalMessage | null;
}

const COMPLAINT_TYPES = new Set(['abuse', 'fraud', 'virus', 'other']);

export function detectComplaint(mail: MimeMessage): FeedbackReport | null {
  const part = mail.parts.find((p) => p.type === 'message/feedback-report');
  if (!part) return null;
  const f = parseFields(part.body.toString('utf8').slice(0, 64 * 1024), false);
  const feedbackType = (first(f, 'feedback-type') || 'abuse').toLowerCase().trim();
  return {
    kind: 'feedback',
    feedbackType,
    complaint: COMPLAINT_TYPES.has(feedbackType),
    userAgent: first(f, 'user-agent'),
    originalMailFrom: stripAngles(first(f, 'original-mail-from')),
    originalRcptTo: (f.get('original-rcpt-to') ?? []).map(stripAngles).filter(Boolean),
    arrivalDate: first(f, 'arrival-date') || first(f, 'received-date'),
    sourceIp: first(f, 'source-ip'),
    reportedDomain: first(f, 'reported-domain'),
    original: originalMessage(mail),
  };
}

/** The event's failed_reason for a complaint. */
export function complaintReason(r: FeedbackReport): string {
  const by = r.userAgent ? ` reported by ${r.userAgent}` : '';
  return `Spam complaint (${r.feedbackType})${by}`.slice(0, 1000);
}

/**
 * Addresses in the report that may be our VERP return path, most trustworthy first: the
 * envelope sender the reporter recorded, then the original's Return-Path. Each is verified
 * (signed tag) before use.
 */
export function returnPathCandidates(r: FeedbackReport): string[] {
  return [r.originalMailFrom, r.original?.returnPath ?? ''].filter(Boolean);
}
