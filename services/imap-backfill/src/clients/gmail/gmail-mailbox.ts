/**
 * The Gmail MailboxClient, over libs/providers' GmailClient (googleapis, one retry policy, the
 * mailer's OAuth tokens). A folder is a system label (INBOX, SENT, SPAM, TRASH); Gmail ids name a
 * message in the whole mailbox (one message may carry INBOX and SENT: the job posts it once).
 *
 * - list: `users.messages.list` with `after:`/`before:` in epoch seconds and, for a participant,
 *   `{from: to:}` (gmail-query.ts: one second wider than the window, Google does not say
 *   whether the bounds are inclusive), then each message's internalDate, thread and labels
 *   (format=minimal, `concurrency` at once), keeping the exact inclusive window.
 * - fetch: format=raw, `concurrency` requests in flight, sources handed on one at a time as they
 *   come; a message deleted since the listing (404) is left out.
 * - oldest: bisection with `before:` (oldest-probe.ts); Gmail lists newest first only.
 * - live: the position is the account's history id (`users.history.list`, messageAdded with
 *   label INBOX, polled every `pollMs`); an expired history id (404, Gmail keeps history about a
 *   week) lists INBOX again from when the last round began (live-cursor.ts), the Message-ID
 *   claim keeping each message posted once.
 * - `thread-id` is Gmail's threadId, `label-ids` the message's labels.
 * Errors: provider-errors.ts (a revoked grant is `auth` without a second MAILER_DEACTIVATED).
 */
import { type GmailClient, type GmailMessageMeta, inGmailWindow } from '@mailyard/providers';
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
import { oldestSecond } from './oldest-probe';

const SOURCE = 'Gmail API';
const SERVICE = 'gmail';

const refOf = (m: GmailMessageMeta): MessageRef => ({
  id: m.id,
  receivedAt: m.internalDate,
  threadId: m.threadId,
  labelIds: m.labelIds,
});

export class GmailMailbox extends ApiMailbox implements MailboxClient {
  readonly service = SERVICE;
  private label: string | null = null;

  constructor(
    private readonly gmail: GmailClient,
    options: ApiMailboxOptions,
  ) {
    super(SOURCE, options);
  }

  resolveFolders(): Promise<Record<FolderRole, string | null>> {
    return this.run(() => this.gmail.folderLabels());
  }

  async openFolder(path: string): Promise<FolderState> {
    this.label = path;
    // Gmail ids never change: one validity for every label.
    return { path, uidValidity: SERVICE };
  }

  list(q: ListQuery): Promise<MessageRef[]> {
    return this.run(async () => {
      const window = { since: q.since, until: q.until };
      const ids = await this.gmail.listAllMessages({
        ...window,
        participant: q.participant,
        labelId: this.label,
      });
      const metas = await this.metas(ids.map((m) => m.id));
      return metas.filter((m) => inGmailWindow(m.internalDate, window)).map(refOf);
    });
  }

  oldest(): Promise<Date | null> {
    return this.run(async () => {
      const second = await oldestSecond(
        async (s) =>
          (await this.gmail.listMessages({ until: new Date(s * 1000), labelId: this.label })).messages
            .length > 0,
        Math.floor(Date.now() / 1000),
      );
      return second === null ? null : new Date(second * 1000);
    });
  }

  fetch(refs: MessageRef[]): AsyncIterable<RawMessage> {
    return this.each(refs, async (ref) => {
      const m = await this.gmail.getRaw(ref.id);
      return { ...refOf(m), source: m.raw };
    });
  }

  livePosition(): Promise<LivePosition> {
    return this.run(async () => {
      const t = new Date().toISOString();
      const { historyId } = await this.gmail.profile();
      return livePosition(SERVICE, { h: historyId, t });
    });
  }

  liveChanges(from: LivePosition): Promise<LiveChanges | null> {
    const cursor = readLiveCursor(from, SERVICE, ['h', 't'] as const);
    if (!cursor) return Promise.resolve(null);
    return this.run(async () => {
      const t = new Date().toISOString();
      const history = await this.gmail.history(cursor.h, { labelId: 'INBOX' });
      let ids: string[];
      let historyId: string;
      if (history.kind === 'changes') {
        ids = history.added.map((a) => a.id);
        historyId = history.historyId;
      } else {
        // History no longer reaches back to the cursor: INBOX again from the last round on.
        historyId = (await this.gmail.profile()).historyId;
        const listed = await this.gmail.listAllMessages({ since: relistFrom(cursor.t), labelId: 'INBOX' });
        ids = listed.map((m) => m.id).reverse();
      }
      const refs = (await this.metas(ids)).map(refOf);
      return { refs, next: livePosition(SERVICE, { h: historyId, t }) };
    });
  }

  /** Metadata of `ids` in their order; messages deleted meanwhile are left out. */
  private async metas(ids: string[]): Promise<GmailMessageMeta[]> {
    const byId = new Map<string, GmailMessageMeta>();
    for await (const m of this.each(ids, (id) => this.gmail.getMeta(id))) byId.set(m.id, m);
    return ids.flatMap((id) => byId.get(id) ?? []);
  }
}
