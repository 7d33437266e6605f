/**
 * The one mapping from a recipient's email_logs row (with its send's custom_args) to a
 * TrackedRecipient: what the tracking service, provider callbacks and inbound feedback need about
 * the recipient an event names. Every loader (email-events.ts findTrackedRecipient, feedback.ts,
 * provider-callbacks.ts) selects with TRACKED_RECIPIENT_SELECT and maps with toTrackedRecipient,
 * adding only its own WHERE; so a column added to TrackedRecipient is added once, here.
 */

/** What the tracking service needs about the recipient a link names. */
export interface TrackedRecipient {
  logId: string;
  tenantId: string;
  refId: string;
  copyId: string;
  email: string;
  mailerId: string;
  messageId: string;
  /** The provider's thread the copy was delivered in (Gmail, Graph); '' when none. */
  threadId: string;
  customArgs: Record<string, unknown> | null;
}

/** email_logs `l` joined to its send `s`; the caller appends WHERE (and ORDER/LIMIT). */
export const TRACKED_RECIPIENT_SELECT = `SELECT l.id, l.tenant_id, l.ref_id, l.copy_id, l.recipient, l.mailer_id, l.message_id,
       l.thread_id, l.attempts, s.custom_args
  FROM email_logs l JOIN sends s ON s.ref_id = l.ref_id`;

/** A row of TRACKED_RECIPIENT_SELECT. */
export interface TrackedRecipientRow {
  id: string;
  tenant_id: string;
  ref_id: string;
  copy_id: string;
  recipient: string;
  mailer_id: string;
  message_id: string;
  thread_id: string;
  attempts: number;
  custom_args: Record<string, unknown> | null;
}

export const toTrackedRecipient = (r: TrackedRecipientRow): TrackedRecipient => ({
  logId: r.id,
  tenantId: r.tenant_id,
  refId: r.ref_id,
  copyId: r.copy_id,
  email: r.recipient,
  mailerId: r.mailer_id,
  messageId: r.message_id,
  threadId: r.thread_id,
  customArgs: r.custom_args,
});
