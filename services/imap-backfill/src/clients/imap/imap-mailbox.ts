/**
 * The IMAP MailboxClient (imapflow). Basic IMAP is port 993 with implicit TLS only (docs/api/mailers.md); one connection per job or watcher, opened by libs/providers openImapConnection
 * like every IMAP connection: the guarded connect (a name that resolves to a private address is
 * refused unless MAILER_ALLOW_PRIVATE_HOSTS; the certificate is checked against the name) and
 * bounds on what the server can make this process hold (no literal over the message cap plus
 * one byte, no line or response past its bound: the connection fails with a terminal error).
 * Errors never carry the password nor the resolved address.
 *
 * Windows: IMAP SEARCH SINCE/BEFORE compare dates only (in the server's time zone), so the search
 * is widened by a day on each side and the exact window is applied to INTERNALDATE here.
 * Sources are fetched with one FETCH command per `fetchBatch` UIDs (a UID set of ranges) and
 * streamed one message at a time, so memory stays flat whatever the mailbox size.
 * Live sync: the position is INBOX's UIDVALIDITY and the last UID read (a first watch starts at
 * UIDNEXT); a changed UIDVALIDITY voids it.
 *
 * The server is not trusted (a tenant may run it):
 * - a message over `maxMessageBytes` is not read: its RFC822.SIZE (listed with its date) says so,
 *   or the FETCH asks for the first `maxMessageBytes + 1` bytes only (`BODY.PEEK[]<0.n>`) and
 *   getting them all says so; it comes out with `oversize` and no source;
 * - of each FETCH only the first complete row of each requested UID is handed on; other rows are
 *   ignored and counted (requested-rows.ts), and a flood of them fails the command;
 * - every command must finish within `commandTimeoutMs`, and a FETCH deliver its next requested
 *   message within it; the login within three times `timeoutMs`. On expiry the connection is
 *   closed (a transient failure: the job retries, live sync reconnects);
 * - a FETCH left before its end (its consumer stopped, or a bound above) closes the connection:
 *   nothing may queue behind a command the server never finishes.
 */
import { type GuardOptions, OutboundTargetError } from '@mailyard/platform';
import { type ImapConnection, ImapDeadlineError, openImapConnection } from '@mailyard/providers';
import type { FetchMessageObject, FetchQueryObject, ImapFlow } from 'imapflow';
import {
  type FolderRole,
  type FolderState,
  type ListQuery,
  type LiveChanges,
  type LivePosition,
  type MailboxClient,
  MailboxError,
  type MessageRef,
  type RawMessage,
} from '../../mailbox/mailbox-client';
import { toUidSet } from '../../mailbox/uid-set';
import { imapStrayRows } from '../../metrics';
import { resolveFolderRoles } from './folders';
import { imapMailboxFailure } from './imap-failure';
import { RequestedRows } from './requested-rows';

export interface ImapCredentials {
  host: string;
  port: number;
  username: string;
  password: string;
}

export interface ImapOptions {
  guard: GuardOptions;
  /** Connect and greeting timeout (the login: three times it). */
  timeoutMs: number;
  /** A command's answer, and a FETCH's next message, within this. */
  commandTimeoutMs: number;
  /** Larger messages are not read (`oversize`). */
  maxMessageBytes: number;
  fetchBatch?: number;
}

const DAY_MS = 86_400_000;
const NO_SOURCE = Buffer.alloc(0);

export async function connectImap(creds: ImapCredentials, opts: ImapOptions): Promise<MailboxClient> {
  if (creds.port !== 993) throw new MailboxError('terminal', 'basic IMAP connects to port 993 (SSL) only');
  let conn: ImapConnection;
  try {
    conn = await openImapConnection(creds, {
      guard: opts.guard,
      timeoutMs: opts.timeoutMs,
      socketTimeoutMs: Math.max(opts.timeoutMs * 6, 60_000),
      maxMessageBytes: opts.maxMessageBytes,
    });
  } catch (err) {
    if (err instanceof OutboundTargetError)
      throw new MailboxError(err.code === 'ETARGET_CONNECT' ? 'transient' : 'terminal', err.message);
    throw new MailboxError('transient', `${creds.host}: ${(err as Error).message}`);
  }
  const hide = (err: unknown) => {
    const e = imapMailboxFailure(conn.failureOf(err), creds.host);
    return new MailboxError(e.kind, e.message);
  };
  try {
    await conn.login();
  } catch (err) {
    conn.client.close();
    throw hide(err);
  }
  return new ImapMailbox(conn, creds.host, opts, hide);
}

/** A selected folder; UIDNEXT is where live sync starts. */
type ImapFolder = FolderState & { uidNext: number };

class ImapMailbox implements MailboxClient {
  readonly service = 'imap';
  readonly idScope = 'folder';
  private readonly client: ImapFlow;
  private readonly fetchBatch: number;

  constructor(
    private readonly conn: ImapConnection,
    private readonly host: string,
    private readonly opts: ImapOptions,
    private readonly hide: (err: unknown) => MailboxError,
  ) {
    this.client = conn.client;
    this.fetchBatch = opts.fetchBatch ?? 500;
  }

  private async run<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw err instanceof MailboxError ? err : this.hide(err);
    }
  }

  /** One command within the command deadline (on expiry the connection is closed). */
  private command<T>(work: Promise<T>, what: string): Promise<T> {
    return this.conn.within(work, this.opts.commandTimeoutMs, what);
  }

  resolveFolders(): Promise<Record<FolderRole, string | null>> {
    return this.run(async () => {
      const list = await this.command(this.client.list(), 'LIST');
      return resolveFolderRoles(
        list.map((f) => ({ path: f.path, name: f.name, specialUse: f.specialUse, flags: f.flags })),
      );
    });
  }

  openFolder(path: string): Promise<ImapFolder> {
    return this.run(async () => {
      // Already selected: no second SELECT (UIDVALIDITY is per session: RFC 3501 2.3.1.1).
      const open = this.client.mailbox;
      if (open && open.path === path)
        return { path, uidValidity: String(open.uidValidity), uidNext: Number(open.uidNext ?? 1) };
      const box = await this.command(this.client.mailboxOpen(path, { readOnly: true }), 'EXAMINE');
      return { path: box.path, uidValidity: String(box.uidValidity), uidNext: Number(box.uidNext ?? 1) };
    });
  }

  list(q: ListQuery): Promise<MessageRef[]> {
    return this.run(async () => {
      const search: Record<string, unknown> = {
        since: new Date(q.since.getTime() - DAY_MS),
        before: new Date(q.until.getTime() + 2 * DAY_MS),
      };
      if (q.participant) search.or = [{ from: q.participant }, { to: q.participant }, { cc: q.participant }];
      const uids = (await this.command(this.client.search(search, { uid: true }), 'SEARCH')) || [];
      const refs = await this.dates(uids);
      return refs.filter((r) => r.receivedAt >= q.since && r.receivedAt <= q.until);
    });
  }

  /** Messages of the open folder with a UID above `afterUid`. */
  private listAfter(afterUid: number): Promise<MessageRef[]> {
    return this.run(async () => {
      const found = await this.command(
        this.client.search({ uid: `${afterUid + 1}:*` }, { uid: true }),
        'SEARCH',
      );
      return this.dates((found || []).filter((u) => u > afterUid));
    });
  }

  /** INBOX at UIDNEXT: mail already there is the backfill's. */
  async livePosition(): Promise<LivePosition> {
    const box = await this.openFolder('INBOX');
    return { validity: box.uidValidity, lastUid: Math.max(0, box.uidNext - 1), cursor: null };
  }

  /** UIDs above the last one read, ascending, each with its position; null when INBOX was renumbered. */
  async liveChanges(from: LivePosition): Promise<LiveChanges | null> {
    const box = await this.openFolder('INBOX');
    if (box.uidValidity !== from.validity) return null;
    const refs = (await this.listAfter(from.lastUid)).sort((a, b) => Number(a.id) - Number(b.id));
    const at = (uid: number): LivePosition => ({ validity: box.uidValidity, lastUid: uid, cursor: null });
    return {
      refs: refs.map((r) => ({ ...r, position: at(Number(r.id)) })),
      next: at(refs.reduce((max, r) => Math.max(max, Number(r.id)), from.lastUid)),
    };
  }

  oldest(): Promise<Date | null> {
    return this.run(async () => {
      const uids = (await this.command(this.client.search({ all: true }, { uid: true }), 'SEARCH')) || [];
      let min: Date | null = null;
      for (let i = 0; i < uids.length; i += 1000) {
        for (const r of await this.dates(uids.slice(i, i + 1000)))
          if (!min || r.receivedAt < min) min = r.receivedAt;
      }
      return min;
    });
  }

  /** INTERNALDATE and RFC822.SIZE of each UID (metadata only), in batches. */
  private async dates(uids: number[]): Promise<MessageRef[]> {
    const out: MessageRef[] = [];
    for (let i = 0; i < uids.length; i += 1000) {
      const query = { uid: true, internalDate: true, size: true };
      for await (const m of this.rows(uids.slice(i, i + 1000), query, (r) => Boolean(r.internalDate))) {
        const size = typeof m.size === 'number' ? { size: m.size } : {};
        out.push({ id: String(m.uid), receivedAt: new Date(m.internalDate!), ...size });
      }
    }
    return out;
  }

  /**
   * FETCH streams: each message is handed on as it arrives and imapflow parses the next one only
   * when asked for it (backpressure), so memory holds about one message whatever the batch size.
   * A message whose listed size is over the cap is not fetched; the others are fetched up to the
   * cap plus one byte, and one that fills it is over the cap: both come out with `oversize`.
   * The caller issues no other command on this mailbox until it is done iterating (imapflow runs
   * one command at a time).
   */
  async *fetch(refs: MessageRef[]): AsyncIterable<RawMessage> {
    const cap = this.opts.maxMessageBytes;
    const uids: number[] = [];
    for (const r of refs) {
      if (r.size !== undefined && r.size > cap)
        yield { id: r.id, receivedAt: r.receivedAt, source: NO_SOURCE, oversize: r.size };
      else uids.push(Number(r.id));
    }
    const query: FetchQueryObject = {
      uid: true,
      internalDate: true,
      source: { start: 0, maxLength: cap + 1 },
    };
    for (let i = 0; i < uids.length; i += this.fetchBatch) {
      try {
        for await (const m of this.rows(uids.slice(i, i + this.fetchBatch), query, (r) =>
          Boolean(r.source && r.internalDate),
        )) {
          const id = String(m.uid);
          const receivedAt = new Date(m.internalDate!);
          yield m.source!.length > cap
            ? { id, receivedAt, source: NO_SOURCE, oversize: cap + 1 }
            : { id, receivedAt, source: m.source! };
        }
      } catch (err) {
        throw err instanceof MailboxError ? err : this.hide(err);
      }
    }
  }

  /**
   * One UID FETCH of `uids`: the first complete row of each requested UID, as it arrives (the
   * rest ignored and counted, a flood of them a transient failure), each within the command
   * deadline of the one before (rows nobody asked for do not extend it), then the command's end
   * within it too. Left before its end, it closes the connection.
   */
  private async *rows(
    uids: number[],
    query: FetchQueryObject,
    complete: (m: FetchMessageObject) => boolean,
  ): AsyncGenerator<FetchMessageObject> {
    if (uids.length === 0) return;
    const wanted = new RequestedRows(uids);
    const it = this.client.fetch(toUidSet(uids), query, { uid: true })[Symbol.asyncIterator]();
    const timeout = this.opts.commandTimeoutMs;
    let ended = false;
    let progressAt = Date.now();
    try {
      for (;;) {
        const left = Math.max(0, progressAt + timeout - Date.now());
        const next = await this.conn.within(it.next(), left, 'FETCH').catch((err: unknown) => {
          if (!(err instanceof ImapDeadlineError)) throw err;
          throw new MailboxError(
            'transient',
            `${this.host}: FETCH: no requested message and no end within ${timeout} ms`,
          );
        });
        if (next.done) {
          ended = true;
          return;
        }
        const verdict = wanted.accept(next.value.uid, complete(next.value));
        if (verdict === 'flood')
          throw new MailboxError(
            'transient',
            `${this.host}: FETCH: the server sent more than ${wanted.maxStrays} responses nobody asked for`,
          );
        if (verdict === 'take') {
          progressAt = Date.now();
          yield next.value;
        }
      }
    } finally {
      if (wanted.strays > 0) imapStrayRows.inc(wanted.strays);
      if (!ended) {
        this.client.close();
        void it.return?.(undefined).catch(() => {});
      }
    }
  }

  async waitForChange(pollMs: number, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    const canIdle = this.client.capabilities.has('IDLE');
    await new Promise<void>((resolve) => {
      let timer: NodeJS.Timeout | null = null;
      const done = () => {
        if (timer) clearTimeout(timer);
        this.client.off('exists', done);
        this.client.off('close', done);
        signal.removeEventListener('abort', done);
        resolve();
      };
      timer = setTimeout(done, pollMs);
      signal.addEventListener('abort', done);
      // A lost connection wakes the waiter at once (the caller reconnects).
      this.client.on('close', done);
      if (canIdle) {
        this.client.on('exists', done);
        // IDLE ends by itself when the next command is issued, or when the connection ends.
        this.client.idle().then(done, done);
      }
    });
    if (!this.client.usable) throw new MailboxError('transient', 'IMAP connection closed');
  }

  async close(): Promise<void> {
    try {
      await this.command(this.client.logout(), 'LOGOUT');
    } catch {
      this.client.close();
    }
  }
}
