/**
 * The IMAP MailboxClient (imapflow). Basic IMAP is port 993 with implicit TLS only (SPEC.md
 * "Limits"); one connection per job or watcher. The connection goes through the platform guard
 * like the gateway's IMAP verify: the host is resolved once and checked (resolveGuarded),
 * imapflow connects to that address with the host name as TLS server name, so the certificate is
 * checked against the name and a name that resolves to a private address is refused (unless
 * MAILER_ALLOW_PRIVATE_HOSTS). Errors never carry the password nor the resolved address.
 *
 * Windows: IMAP SEARCH SINCE/BEFORE compare dates only (in the server's time zone), so the search
 * is widened by a day on each side and the exact window is applied to INTERNALDATE here.
 * Sources are fetched with one FETCH command per `fetchBatch` UIDs (a UID set of ranges) and
 * streamed one message at a time, so memory stays flat whatever the mailbox size.
 */
import { isIP } from 'node:net';
import { type GuardOptions, OutboundTargetError, normalizeHost, resolveGuarded } from '@mailyard/platform';
import { ImapFlow } from 'imapflow';
import {
  type FolderRole,
  type FolderState,
  type ListQuery,
  type MailboxClient,
  MailboxError,
  type MessageRef,
  type RawMessage,
} from '../../mailbox/mailbox-client';
import { toUidSet } from '../../mailbox/uid-set';
import { classifyImapError } from './classify-imap-error';
import { resolveFolderRoles } from './folders';

export interface ImapCredentials {
  host: string;
  port: number;
  username: string;
  password: string;
}

export interface ImapOptions {
  guard: GuardOptions;
  timeoutMs: number;
  fetchBatch?: number;
}

const DAY_MS = 86_400_000;

export async function connectImap(creds: ImapCredentials, opts: ImapOptions): Promise<MailboxClient> {
  if (creds.port !== 993) throw new MailboxError('terminal', 'basic IMAP connects to port 993 (SSL) only');
  let address: string;
  try {
    address = (await resolveGuarded(creds.host, opts.guard)).address;
  } catch (err) {
    if (err instanceof OutboundTargetError)
      throw new MailboxError(err.code === 'ETARGET_CONNECT' ? 'transient' : 'terminal', err.message);
    throw new MailboxError('transient', `${creds.host}: ${(err as Error).message}`);
  }
  const name = normalizeHost(creds.host);
  const client = new ImapFlow({
    host: address,
    ...(isIP(name) ? {} : { servername: name }),
    port: creds.port,
    secure: true,
    auth: { user: creds.username, pass: creds.password },
    logger: false,
    connectionTimeout: opts.timeoutMs,
    greetingTimeout: opts.timeoutMs,
    socketTimeout: Math.max(opts.timeoutMs * 6, 60_000),
    disableAutoIdle: true,
  });
  // Late socket errors must not become unhandled 'error' events; the next command reports them.
  client.on('error', () => {});
  const hide = (err: unknown) => {
    const e = classifyImapError(err, creds.host);
    return new MailboxError(e.kind, e.message.split(address).join(creds.host));
  };
  try {
    await client.connect();
  } catch (err) {
    throw hide(err);
  }
  return new ImapMailbox(client, opts.fetchBatch ?? 500, hide);
}

class ImapMailbox implements MailboxClient {
  constructor(
    private readonly client: ImapFlow,
    private readonly fetchBatch: number,
    private readonly hide: (err: unknown) => MailboxError,
  ) {}

  private async run<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw err instanceof MailboxError ? err : this.hide(err);
    }
  }

  resolveFolders(): Promise<Record<FolderRole, string | null>> {
    return this.run(async () => {
      const list = await this.client.list();
      return resolveFolderRoles(
        list.map((f) => ({ path: f.path, name: f.name, specialUse: f.specialUse, flags: f.flags })),
      );
    });
  }

  openFolder(path: string): Promise<FolderState> {
    return this.run(async () => {
      // Already selected: no second SELECT (UIDVALIDITY is per session: RFC 3501 2.3.1.1).
      const open = this.client.mailbox;
      if (open && open.path === path)
        return { path, uidValidity: String(open.uidValidity), uidNext: Number(open.uidNext ?? 1) };
      const box = await this.client.mailboxOpen(path, { readOnly: true });
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
      const uids = (await this.client.search(search, { uid: true })) || [];
      const refs = await this.dates(uids);
      return refs.filter((r) => r.receivedAt >= q.since && r.receivedAt <= q.until);
    });
  }

  listAfter(afterUid: number): Promise<MessageRef[]> {
    return this.run(async () => {
      const uids = ((await this.client.search({ uid: `${afterUid + 1}:*` }, { uid: true })) || []).filter(
        (u) => u > afterUid,
      );
      return this.dates(uids);
    });
  }

  oldest(): Promise<Date | null> {
    return this.run(async () => {
      const uids = (await this.client.search({ all: true }, { uid: true })) || [];
      let min: Date | null = null;
      for (let i = 0; i < uids.length; i += 1000) {
        for (const r of await this.dates(uids.slice(i, i + 1000)))
          if (!min || r.receivedAt < min) min = r.receivedAt;
      }
      return min;
    });
  }

  /** INTERNALDATE of each UID (metadata only), in batches. */
  private async dates(uids: number[]): Promise<MessageRef[]> {
    const out: MessageRef[] = [];
    for (let i = 0; i < uids.length; i += 1000) {
      const range = toUidSet(uids.slice(i, i + 1000));
      for await (const m of this.client.fetch(range, { uid: true, internalDate: true }, { uid: true })) {
        if (m.internalDate) out.push({ uid: m.uid, receivedAt: new Date(m.internalDate) });
      }
    }
    return out;
  }

  /**
   * FETCH streams: each message is handed on as it arrives and imapflow parses the next one only
   * when asked for it (backpressure), so memory holds about one message whatever the batch size.
   * The caller issues no other command on this mailbox until it is done iterating (imapflow runs
   * one command at a time).
   */
  async *fetch(uids: number[]): AsyncIterable<RawMessage> {
    for (let i = 0; i < uids.length; i += this.fetchBatch) {
      const set = toUidSet(uids.slice(i, i + this.fetchBatch));
      try {
        for await (const m of this.client.fetch(
          set,
          { uid: true, internalDate: true, source: true },
          { uid: true },
        ))
          if (m.source && m.internalDate)
            yield { uid: m.uid, receivedAt: new Date(m.internalDate), source: m.source };
      } catch (err) {
        throw this.hide(err);
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
      await this.client.logout();
    } catch {
      this.client.close();
    }
  }
}
