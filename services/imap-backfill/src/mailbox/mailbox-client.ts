/**
 * What the backfill and live-sync workers need from a mailbox, whatever the provider: IMAP
 * (clients/imap) today, the Gmail API and Microsoft Graph beside it later. Jobs, cursors and
 * leases live outside this interface, so a provider plugs in by implementing it alone.
 *
 * Errors a client throws are MailboxError with a `kind`:
 * - `auth`: credentials rejected: the mailer is deactivated, the job fails;
 * - `transient`: connection lost, timeout, server busy: retried with back-off;
 * - `terminal`: anything else that will not get better by retrying.
 */

/** The folders a backfill may walk (SPEC.md start request `folders`). */
export const FOLDER_ROLES = ['inbox', 'sent', 'spam', 'trash'] as const;
export type FolderRole = (typeof FOLDER_ROLES)[number];

export interface MessageRef {
  /** Provider id inside the folder (IMAP UID). */
  uid: number;
  /** When the mailbox received it (IMAP INTERNALDATE): what windows are measured on. */
  receivedAt: Date;
}

export interface RawMessage extends MessageRef {
  /** The whole RFC 5322 source. */
  source: Buffer;
}

export interface FolderState {
  /** The folder's name at the provider (label id). */
  path: string;
  /** Changes when the provider renumbered the folder (IMAP UIDVALIDITY); checkpoints then restart. */
  uidValidity: string;
  /** The id the next message will get (IMAP UIDNEXT): live sync starts there. */
  uidNext: number;
}

export interface ListQuery {
  /** Inclusive lower bound (whole seconds). */
  since: Date;
  /** Inclusive upper bound (whole seconds). */
  until: Date;
  /** Only messages with this address in From, To or Cc. */
  participant?: string | null;
}

export interface MailboxClient {
  /** The folder of each role, null when the mailbox has none. */
  resolveFolders(): Promise<Record<FolderRole, string | null>>;
  /** Selects a folder for the calls below. */
  openFolder(path: string): Promise<FolderState>;
  /** Messages of the open folder received within the query window, exactly (not day precision). */
  list(query: ListQuery): Promise<MessageRef[]>;
  /** Messages newer than `afterUid` in the open folder (live sync). */
  listAfter(afterUid: number): Promise<MessageRef[]>;
  /** The oldest receipt time in the open folder, null when empty. */
  oldest(): Promise<Date | null>;
  /**
   * Streams the full sources of `uids` of the open folder, one message at a time, in any order.
   * No other call on this client may start until the iteration has ended.
   */
  fetch(uids: number[]): AsyncIterable<RawMessage>;
  /**
   * Resolves when the open folder may have new mail (IMAP IDLE, or after `pollMs` when the
   * server has no IDLE) or when `signal` aborts.
   */
  waitForChange(pollMs: number, signal: AbortSignal): Promise<void>;
  close(): Promise<void>;
}

export type MailboxErrorKind = 'auth' | 'transient' | 'terminal';

export class MailboxError extends Error {
  override name = 'MailboxError';
  constructor(
    readonly kind: MailboxErrorKind,
    message: string,
  ) {
    super(message);
  }
}
