/**
 * The Outlook MailboxClient, over libs/providers' GraphClient (Microsoft Graph v1.0, immutable
 * ids, one retry policy, the mailer's OAuth tokens). A folder is a well-known folder (inbox,
 * sentitems, junkemail, deleteditems) by id; a message is in one folder.
 *
 * - list: `listWindow`: `$filter` on receivedDateTime (exact seconds), or for a participant a
 *   `$search` on `participants:` (from, to, cc, bcc) with the window split wherever a search
 *   reaches Graph's 1000-result cap (search-window.ts); exact inclusive window, newest first.
 *   A window under a day that still reaches the cap cannot be narrowed (KQL dates): logged.
 * - fetch: `$value` (the MIME bytes), `concurrency` requests in flight, handed on one at a time;
 *   a message deleted since the listing (404) is left out.
 * - oldest: `$orderby=receivedDateTime asc`, `$top=1`.
 * - live: the position is the INBOX messages delta link (`delta`, polled every `pollMs`); the
 *   first watch's first round is a delta of mail received from the watch's start on (all new);
 *   a delta link Graph no longer knows (410 syncStateNotFound) starts a new delta from when the
 *   last round began (live-cursor.ts), the Message-ID claim keeping each message posted once.
 *   Changes to mail received before the delta began (read flags, moves of old mail) are not new
 *   mail and are left out.
 * - `thread-id` is the conversationId, `label-ids` the folder's display name.
 * Errors: provider-errors.ts (a revoked grant is `auth` without a second MAILER_DEACTIVATED).
 */
import type { Logger } from '@mailyard/platform';
import type { GraphClient, GraphMessageRef } from '@mailyard/providers';
import type {
  FolderRole,
  FolderState,
  ListQuery,
  LiveChanges,
  LivePosition,
  MailboxClient,
  MessageRef,
  RawMessage,
} from '../../mailbox/mailbox-client';
import { ApiMailbox } from '../api/api-mailbox';
import { livePosition, readLiveCursor, relistFrom } from '../api/live-cursor';
import type { ApiMailboxOptions } from '../api/options';

const SOURCE = 'Microsoft Graph';
const SERVICE = 'outlook';
/** The well-known name Graph accepts wherever a folder id goes. */
const INBOX = 'inbox';

export class GraphMailbox extends ApiMailbox implements MailboxClient {
  readonly service = SERVICE;
  private folder: string | null = null;
  /** Display names by folder id (and `inbox`), for `label-ids`. */
  private readonly names = new Map<string, string>();
  private readonly logger: Logger | undefined;

  constructor(
    private readonly graph: GraphClient,
    options: ApiMailboxOptions & { logger?: Logger },
  ) {
    super(SOURCE, options);
    this.logger = options.logger;
  }

  resolveFolders(): Promise<Record<FolderRole, string | null>> {
    return this.run(async () => {
      const folders = await this.graph.wellKnownFolders();
      const out = {} as Record<FolderRole, string | null>;
      for (const [role, f] of Object.entries(folders) as Array<
        [FolderRole, { id: string; displayName: string } | null]
      >) {
        out[role] = f?.id ?? null;
        if (f) this.names.set(f.id, f.displayName);
        if (f && role === 'inbox') this.names.set(INBOX, f.displayName);
      }
      return out;
    });
  }

  async openFolder(path: string): Promise<FolderState> {
    this.folder = path;
    // Immutable ids never change: one validity for every folder.
    return { path, uidValidity: SERVICE };
  }

  list(q: ListQuery): Promise<MessageRef[]> {
    return this.run(async () => {
      const folder = this.folder ?? INBOX;
      const { messages, truncated } = await this.graph.listWindow(folder, q);
      if (truncated)
        this.logger?.warn(
          'Graph search reached its 1000-result cap within a day; some messages may be missing',
          {
            since: q.since.toISOString(),
            until: q.until.toISOString(),
          },
        );
      const label = await this.nameOf(folder);
      return messages.map((m) => this.refOf(m, label));
    });
  }

  oldest(): Promise<Date | null> {
    return this.run(() => this.graph.oldestReceived(this.folder ?? INBOX));
  }

  fetch(refs: MessageRef[]): AsyncIterable<RawMessage> {
    return this.each(refs, async (ref) => ({ ...ref, source: await this.graph.getMime(ref.id) }));
  }

  /** Now, to the second: the first round's delta lists what was received from then on. */
  livePosition(): Promise<LivePosition> {
    return this.run(async () => {
      await this.nameOf(INBOX); // the mailbox answers, and the label is known
      const now = new Date(Math.floor(Date.now() / 1000) * 1000).toISOString();
      return livePosition(SERVICE, { s: now, t: now });
    });
  }

  liveChanges(from: LivePosition): Promise<LiveChanges | null> {
    const cursor = readLiveCursor(from, SERVICE, ['s', 't'] as const);
    if (!cursor) return Promise.resolve(null);
    return this.run(async () => {
      const t = new Date().toISOString();
      let since = cursor.s;
      let delta = cursor.d
        ? await this.graph.delta(INBOX, { deltaLink: cursor.d })
        : await this.graph.delta(INBOX, { since: new Date(since) });
      if (delta.kind === 'resync') {
        // Graph forgot the delta: a new one from when the last round began.
        since = relistFrom(cursor.t).toISOString();
        delta = await this.graph.delta(INBOX, { since: new Date(since) });
      }
      if (delta.kind === 'resync') throw new Error('Microsoft Graph asked for a resync of a new delta');
      // Graph reports receipt times in whole seconds.
      const received = Math.floor(Date.parse(since) / 1000) * 1000;
      const label = await this.nameOf(INBOX);
      const refs = delta.changed
        .filter((m) => m.receivedAt.getTime() >= received)
        .sort((a, b) => a.receivedAt.getTime() - b.receivedAt.getTime())
        .map((m) => this.refOf(m, label));
      return { refs, next: livePosition(SERVICE, { d: delta.deltaLink, s: since, t }) };
    });
  }

  private refOf(m: GraphMessageRef, label: string): MessageRef {
    return {
      id: m.id,
      receivedAt: m.receivedAt,
      threadId: m.conversationId,
      labelIds: [label],
      ...(m.internetMessageId ? { messageId: m.internetMessageId } : {}),
    };
  }

  private async nameOf(folder: string): Promise<string> {
    if (!this.names.has(folder)) await this.resolveFolders();
    return this.names.get(folder) ?? folder;
  }
}
