import type { EmailLogStatus } from '../api/logs';
import type { EmailEventType } from './email-event';

/**
 * SCHEDULED (waiting for its send_at) ranks with QUEUED: the release sets QUEUED itself. CANCELLED
 * is final: a cancelled row has its send outcome (no event is ever recorded for it), and no
 * event may move it.
 *
 * A log row's status never moves backwards: an event changes it only to a status of a higher
 * rank. So a late MAIL_DELIVERED does not overwrite MAIL_OPENED, and a bounce reported after an
 * open does not hide the open. FAILED < MAIL_DELIVERED: should a recipient that failed still be
 * delivered (a duplicate after a crash), the delivery is what happened.
 */
export const EMAIL_STATUS_RANK: Record<EmailLogStatus, number> = {
  SCHEDULED: 0,
  QUEUED: 0,
  FAILED: 1,
  MAIL_DELIVERED: 2,
  MAIL_BOUNCE: 3,
  MAIL_OPENED: 4,
  MAIL_CLICKED: 5,
  MAIL_UNSUBSCRIBED: 6,
  CANCELLED: 100,
};

export function statusRank(status: string): number {
  return EMAIL_STATUS_RANK[status as EmailLogStatus] ?? 0;
}

/** True when moving a log row from `current` to `next` is allowed (strictly higher rank). */
export function statusAdvances(current: string, next: string): boolean {
  return statusRank(next) > statusRank(current);
}

/**
 * The log status an event moves a recipient to, or null when it leaves the status as is (an
 * SMTP_ERROR with a retry scheduled keeps the row QUEUED; MAIL_SPAM is not a status).
 */
export function statusForEvent(event: EmailEventType, retryScheduled?: boolean): EmailLogStatus | null {
  switch (event) {
    case 'MAIL_DELIVERED':
      return 'MAIL_DELIVERED';
    case 'MAIL_OPENED':
      return 'MAIL_OPENED';
    case 'MAIL_CLICKED':
      return 'MAIL_CLICKED';
    case 'MAIL_BOUNCE':
      return 'MAIL_BOUNCE';
    case 'MAIL_UNSUBSCRIBED':
      return 'MAIL_UNSUBSCRIBED';
    case 'SMTP_ERROR':
      return retryScheduled ? null : 'FAILED';
    case 'PHISHING':
    case 'MAIL_POLICY_REJECTION':
    case 'MAIL_GENERATION_REJECTION':
    case 'MAIL_GENERATION_FAILURE':
      return 'FAILED';
    case 'MAIL_SPAM':
      return null;
  }
}

/** `CASE <column> WHEN 'QUEUED' THEN 0 ... END`, for status comparisons inside SQL. */
export function statusRankSql(column: string): string {
  const whens = Object.entries(EMAIL_STATUS_RANK)
    .map(([s, r]) => `WHEN '${s}' THEN ${r}`)
    .join(' ');
  return `(CASE ${column} ${whens} ELSE 0 END)`;
}
