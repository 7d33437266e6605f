/**
 * What the backfill and live-sync workers need from a mailbox, whatever the provider: IMAP
 * (clients/imap), the Gmail API (clients/gmail) and Microsoft Graph (clients/graph). Jobs,
 * checkpoints and leases live outside this interface, so a provider plugs in by implementing it.
 *
 * Ids are strings: an IMAP UID (decimal, unique in its folder), a Gmail message id (hex), a Graph
 * message id (long, opaque); `idScope` says whether an id names the message in the whole mailbox
 * (Gmail: one message may carry several folder labels). Live sync keeps a `LivePosition` per
 * mailer: IMAP keeps UIDVALIDITY and the last UID read; API mailboxes an opaque provider cursor
 * (Gmail history id, Graph delta link) the client alone reads.
 *
 * Errors a client throws are MailboxError with a `kind`:
 * - `auth`: credentials rejected: the mailer is deactivated (unless `deactivation` is null: the
 *   OAuth token layer already deactivated it with `oauth_revoked`), the job fails;
 * - `transient`: connection lost, timeout, provider busy (`retryAfterMs`): retried with back-off;
 * - `terminal`: anything else that will not get better by retrying.
 */

/** The folders a backfill may walk (docs/api/backfill.md, start request `folders`). */
export const FOLDER_ROLES = ['inbox', 'sent', 'spam', 'trash'] as const;
export type FolderRole = (typeof FOLDER_ROLES)[number];

export interface MessageRef {
  /** Provider id: IMAP UID (decimal, in the open folder), Gmail or Graph message id. */
  id: string;
  /** When the mailbox received it (IMAP INTERNALDATE, Gmail internalDate, Graph receivedDateTime). */
  receivedAt: Date;
  /** Provider thread (Gmail threadId, Graph conversationId); absent for IMAP. */
  threadId?: string;
  /** The message's labels (Gmail labelIds, the Graph folder's name); absent: the folder's path. */
  labelIds?: string[];
  /** The Message-ID when the listing already tells it (Graph internetMessageId). */
  messageId?: string;
  /** Its size in bytes when the listing tells it (IMAP RFC822.SIZE). */
  size?: number;
}

export interface RawMessage extends MessageRef {
  /** The whole RFC 5322 source; empty when `oversize` is set. */
  source: Buffer;
  /**
   * Set when the message is larger than the client reads (IMAP_MAX_MESSAGE_BYTES) and was not
   * read: its size, or the cap plus one when only known to be larger (mailbox/too-large.ts).
   */
  oversize?: number;
}

export interface FolderState {
  /** The folder's name at the provider (IMAP path, Gmail label id, Graph folder id). */
  path: string;
  /** Changes when the provider renumbered the folder (IMAP UIDVALIDITY; constant for API ids). */
  uidValidity: string;
}

export interface ListQuery {
  /** Inclusive lower bound (whole seconds). */
  since: Date;
  /** Inclusive upper bound (whole seconds). */
  until: Date;
  /** Only messages with this address as a participant: IMAP From, To or Cc; Gmail from: or to:; Graph any participant (docs/api/backfill.md). */
  participant?: string | null;
}

/** Where live sync has read a mailbox's INBOX up to (stored per mailer, libs/store imapSync). */
export interface LivePosition {
  /** IMAP: UIDVALIDITY; API mailboxes: the service name. */
  validity: string;
  /** IMAP: the last UID read; API mailboxes: 0. */
  lastUid: number;
  /** API mailboxes: the provider cursor (read by the client only); IMAP: null. */
  cursor: string | null;
}

export interface LiveChanges {
  /** INBOX messages that arrived after the position, oldest first where the provider tells. */
  refs: Array<MessageRef & { position?: LivePosition }>;
  /** The position once every ref is handled (a ref's own `position`: once it is). */
  next: LivePosition;
}

export interface MailboxClient {
  /** `mailer-service` of the INCOMING_EMAIL payloads: imap, gmail, outlook. */
  readonly service: string;
  /** `folder`: an id names a message within its folder (IMAP); `mailbox`: within the mailbox. */
  readonly idScope: 'folder' | 'mailbox';
  /** The folder of each role, null when the mailbox has none. */
  resolveFolders(): Promise<Record<FolderRole, string | null>>;
  /** Selects a folder for the calls below. */
  openFolder(path: string): Promise<FolderState>;
  /** Messages of the open folder received within the query window, exactly (not day precision). */
  list(query: ListQuery): Promise<MessageRef[]>;
  /** The oldest receipt time in the open folder (or a moment before it), null when empty. */
  oldest(): Promise<Date | null>;
  /**
   * Streams the full sources of `refs` (listed from the open folder, or live changes), one
   * message at a time, in any order; a message deleted meanwhile is left out, a message over the
   * client's size cap comes with `oversize` and no source. Only messages of `refs` come, each
   * once, whatever the provider sends. No other call on this client may start until the
   * iteration has ended.
   */
  fetch(refs: MessageRef[]): AsyncIterable<RawMessage>;
  /** Live sync: the INBOX position now (mail after it is new). */
  livePosition(): Promise<LivePosition>;
  /**
   * Live sync: INBOX mail that arrived after `from`; null when `from` no longer applies (a
   * renumbered INBOX, another provider's position): start again at livePosition().
   */
  liveChanges(from: LivePosition): Promise<LiveChanges | null>;
  /**
   * Resolves when INBOX may have new mail (IMAP IDLE; else after `pollMs`: polling) or when
   * `signal` aborts.
   */
  waitForChange(pollMs: number, signal: AbortSignal): Promise<void>;
  close(): Promise<void>;
}

export type MailboxErrorKind = 'auth' | 'transient' | 'terminal';

export interface MailboxErrorOptions {
  /** Who refused or failed, for the job's failed reason ("IMAP authentication failed: ..."). */
  source?: string;
  /**
   * `auth` only: null when the mailer is already deactivated (OAuth grant revoked: the token
   * layer deactivated it with `oauth_revoked` and sent MAILER_DEACTIVATED); no second event.
   */
  deactivation?: 'provider_auth_error' | null;
  /** `transient` only: the provider asked to wait this long before the next try (Retry-After). */
  retryAfterMs?: number | null;
}

export class MailboxError extends Error {
  override name = 'MailboxError';
  readonly source: string;
  readonly deactivation: 'provider_auth_error' | null;
  readonly retryAfterMs: number | null;
  constructor(
    readonly kind: MailboxErrorKind,
    message: string,
    options: MailboxErrorOptions = {},
  ) {
    super(message);
    this.source = options.source ?? 'IMAP';
    this.deactivation = options.deactivation === undefined ? 'provider_auth_error' : options.deactivation;
    this.retryAfterMs = options.retryAfterMs ?? null;
  }
}
