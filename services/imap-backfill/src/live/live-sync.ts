/**
 * Live sync: new INBOX mail of every active IMAP-capable mailer with an incoming webhook is
 * posted as INCOMING_EMAIL to that webhook (mailer-service "imap", label-ids ["INBOX"]; OAuth
 * mailboxes "gmail" / "outlook" with their thread id and labels).
 *
 * - Mailboxes are spread over replicas by a lease per mailer in Redis (kv locks): a replica
 *   watches the mailers whose lease it holds and renews it; when a replica dies its leases
 *   expire and another takes them over.
 * - One connection per watched mailer, waiting with IDLE (or polling when the server has no
 *   IDLE; API mailboxes poll Gmail history / Graph delta), re-checking at least every `syncPollMs`.
 * - Where INBOX was read up to is stored (MailboxClient LivePosition: IMAP UIDVALIDITY + last
 *   UID, or the provider's cursor); a first watch, or a renumbered INBOX, starts now (existing
 *   mail is the history backfill's job).
 * - Each Message-ID is posted once per mailer, whatever replica sees it: the post is an outbox
 *   row written with the Message-ID claim and the read mark (libs/store imapSync.postNew), so a
 *   replica killed mid-post neither loses nor repeats a message.
 * - Connection failures reconnect with back-off (at least the provider's Retry-After); after
 *   `syncErrorAfter` in a row an IMAP_ERROR event goes to the mailer's webhook (once per failing
 *   stretch). Rejected credentials deactivate the mailer (MAILER_DEACTIVATED; a revoked OAuth
 *   grant was deactivated by the token layer already) and end the watch; deactivated, disabled
 *   or deleted mailers are not watched.
 */
import type { Bus, Kv, Logger } from '@mailyard/platform';
import {
  type Db,
  type Lease,
  MAILBOX_RETRY_MAX_MS,
  acquireKvLease,
  backoffOrAsked,
  keepLeaseAlive,
  messageIdOf,
} from '@mailyard/platform';
import { deactivateMailer, imapSync, listWatchableImapMailers, mailers } from '@mailyard/store';
import { mailboxIncomingEmail } from '../incoming-email';
import {
  type LiveChanges,
  type LivePosition,
  type MailboxClient,
  MailboxError,
  type RawMessage,
} from '../mailbox/mailbox-client';
import { syncFailures, syncPosted, syncWatched } from '../metrics';
import type { OpenMailbox } from '../open-mailbox';
import { postImapError } from '../publish';
import type { BackfillSettings } from '../settings';

export interface LiveSyncDeps {
  db: Db;
  kv: Kv;
  bus: Bus;
  logger: Logger;
  settings: BackfillSettings;
  openMailbox: OpenMailbox;
  /** How often the list of mailers to watch is refreshed. */
  scanMs?: number;
}

interface Watch {
  abort: AbortController;
  done: Promise<void>;
}

export class LiveSync {
  private readonly watches = new Map<string, Watch>();
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(private readonly deps: LiveSyncDeps) {}

  start(): void {
    const tick = () => {
      if (this.stopped) return;
      this.scan()
        .catch((err) => this.deps.logger.warn('live sync scan failed', { error: (err as Error).message }))
        .finally(() => {
          if (!this.stopped) this.timer = setTimeout(tick, this.deps.scanMs ?? 5000);
        });
    };
    tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    for (const w of this.watches.values()) w.abort.abort();
    await Promise.allSettled([...this.watches.values()].map((w) => w.done));
  }

  /** Mailers this process watches now. */
  watching(): string[] {
    return [...this.watches.keys()];
  }

  private async scan(): Promise<void> {
    const wanted = await listWatchableImapMailers(this.deps.db);
    const ids = new Set(wanted.map((m) => m.mailerId));
    for (const [id, w] of this.watches) if (!ids.has(id)) w.abort.abort();
    for (const m of wanted) {
      if (this.watches.has(m.mailerId) || this.stopped) continue;
      const lease = await acquireKvLease(
        this.deps.kv,
        `imap-sync:lease:${m.mailerId}`,
        this.deps.settings.syncLeaseMs,
      );
      if (!lease) continue;
      const abort = new AbortController();
      const done = this.watch(m.tenantId, m.mailerId, lease, abort.signal)
        .catch(
          (err) => void this.deps.logger.error('live sync watch crashed', { mailer_id: m.mailerId, err }),
        )
        .finally(() => {
          this.watches.delete(m.mailerId);
          syncWatched.set(this.watches.size);
          void lease.release().catch(() => false);
        });
      this.watches.set(m.mailerId, { abort, done });
      syncWatched.set(this.watches.size);
    }
  }

  /**
   * Watches one mailer while this replica holds its lease. The lease is renewed every third of
   * its length, also while a command runs (one may take up to IMAP_COMMAND_TIMEOUT_MS against a
   * server that never answers it): the watch, and its count of failures in a row, last until
   * the mailer leaves or the lease is lost.
   */
  private async watch(tenantId: string, mailerId: string, lease: Lease, stop: AbortSignal) {
    const renew = () => lease.renew().catch(() => false);
    const holding = new AbortController();
    const end = () => holding.abort();
    stop.addEventListener('abort', end);
    const stopRenewing = keepLeaseAlive(lease, { floorMs: 100, onLost: end, onError: end });
    try {
      await this.watchHeld(tenantId, mailerId, renew, holding.signal);
    } finally {
      stopRenewing();
      stop.removeEventListener('abort', end);
    }
  }

  private async watchHeld(
    tenantId: string,
    mailerId: string,
    renew: () => Promise<boolean>,
    signal: AbortSignal,
  ) {
    const { settings, logger, db } = this.deps;
    let failures = 0;
    let reported = false;
    while (!signal.aborted) {
      const mailer = await mailers.get(db, tenantId, mailerId);
      if (!mailer || mailer.state !== 'active' || !mailer.webhook) return;
      let mailbox: MailboxClient | null = null;
      try {
        mailbox = await this.deps.openMailbox(mailer);
        const saved = await imapSync.state(db, mailerId);
        let at: LivePosition | null = saved
          ? { validity: saved.uidvalidity, lastUid: saved.lastUid, cursor: saved.cursor }
          : null;
        while (!signal.aborted) {
          if (!(await renew())) return; // the lease went to another replica
          const changes = at ? await mailbox.liveChanges(at) : null;
          if (at && changes) at = await this.postChanges(mailbox, mailer, at, changes);
          else {
            // A first watch, or a position that no longer applies (renumbered INBOX): start now.
            at = await mailbox.livePosition();
            await this.save(tenantId, mailerId, at);
          }
          failures = 0;
          reported = false;
          await mailbox.waitForChange(
            Math.min(settings.syncPollMs, Math.floor(settings.syncLeaseMs / 3)),
            signal,
          );
        }
      } catch (err) {
        const kind = err instanceof MailboxError ? err.kind : 'transient';
        const message = err instanceof Error ? err.message : String(err);
        if (err instanceof MailboxError && kind === 'auth') {
          if (err.deactivation) await deactivateMailer(db, tenantId, mailerId, err.deactivation, message);
          logger.warn('live sync: authentication rejected; mailer deactivated', {
            mailer_id: mailerId,
            source: err.source,
          });
          return;
        }
        failures++;
        syncFailures.inc();
        logger.info('live sync connection failed', { mailer_id: mailerId, failures, error: message });
        if (failures >= settings.syncErrorAfter && !reported) {
          reported = true;
          await postImapError(this.deps.bus, tenantId, {
            event: 'IMAP_ERROR',
            success: false,
            details: {
              mailer_id: mailerId,
              failed_reason: message,
              attempts: failures,
              event_at: new Date().toISOString(),
            },
          }).catch(() => {});
        }
        const wait = backoffOrAsked(
          failures - 1,
          { minMs: settings.syncRetryBaseMs, maxMs: MAILBOX_RETRY_MAX_MS, maxDoublings: 8 },
          err instanceof MailboxError ? err.retryAfterMs : null,
        );
        await sleep(wait, signal);
        if (!(await renew())) return;
      } finally {
        await mailbox?.close().catch(() => {});
      }
    }
  }

  /**
   * Posts what arrived (each Message-ID once) and returns the position after it. A message the
   * listing already names by Message-ID and that was posted before is not fetched again (Graph
   * reports read/flag changes of posted mail as changes too).
   */
  private async postChanges(
    mailbox: MailboxClient,
    mailer: { tenantId: string; id: string; email: string },
    at: LivePosition,
    changes: LiveChanges,
  ): Promise<LivePosition> {
    const named = changes.refs.flatMap((r) => (r.messageId ? [r.messageId] : []));
    const posted = await imapSync.postedOf(this.deps.db, mailer.id, named);
    const refs = changes.refs.filter((r) => !r.messageId || !posted.has(r.messageId));
    const after = new Map(refs.map((r) => [r.id, r.position ?? at]));
    for await (const msg of mailbox.fetch(refs))
      await this.post(mailbox, mailer, msg, after.get(msg.id) ?? at);
    if (!samePosition(changes.next, at)) await this.save(mailer.tenantId, mailer.id, changes.next);
    return changes.next;
  }

  /** Posts a new message once per Message-ID (store: outbox row and read mark in one transaction). */
  private async post(
    mailbox: MailboxClient,
    mailer: { tenantId: string; id: string; email: string },
    msg: RawMessage,
    position: LivePosition,
  ): Promise<void> {
    const body = await mailboxIncomingEmail(msg, {
      mailerId: mailer.id,
      email: mailer.email,
      service: mailbox.service,
      folder: 'INBOX',
      maxBytes: this.deps.settings.maxMessageBytes,
    });
    const posted = await imapSync.postNew(this.deps.db, {
      tenantId: mailer.tenantId,
      mailerId: mailer.id,
      // A message too large to read has no source: its UID (or the listing's Message-ID) names it.
      messageId: messageIdOf(msg.source) || msg.messageId || `uid:${position.validity}:${msg.id}`,
      uidvalidity: position.validity,
      uid: position.lastUid,
      cursor: position.cursor,
      message: { mailer_id: mailer.id, event: 'INCOMING_EMAIL', body },
    });
    if (posted) syncPosted.inc();
  }

  private save(tenantId: string, mailerId: string, p: LivePosition): Promise<void> {
    return imapSync.saveState(this.deps.db, tenantId, mailerId, p.validity, p.lastUid, p.cursor);
  }
}

function samePosition(a: LivePosition, b: LivePosition): boolean {
  return a.validity === b.validity && a.lastUid === b.lastUid && a.cursor === b.cursor;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done);
  });
}
