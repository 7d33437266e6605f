/**
 * Live sync: new INBOX mail of every active IMAP-capable mailer with an incoming webhook is
 * posted as INCOMING_EMAIL (mailer-service "imap", label-ids ["INBOX"]) to that webhook.
 *
 * - Mailboxes are spread over replicas by a lease per mailer in Redis (kv locks): a replica
 *   watches the mailers whose lease it holds and renews it; when a replica dies its leases
 *   expire and another takes them over.
 * - One connection per watched mailer, waiting with IDLE (or polling when the server has no
 *   IDLE), re-checking at least every `syncPollMs`.
 * - Where INBOX was read up to (UIDVALIDITY + last UID) is stored; a new or renumbered INBOX
 *   starts at UIDNEXT (existing mail is the history backfill's job).
 * - Each Message-ID is posted once per mailer, whatever replica sees it: the post is an outbox
 *   row written with the Message-ID claim and the read mark (libs/store imapSync.postNew), so a
 *   replica killed mid-post neither loses nor repeats a message.
 * - Connection failures reconnect with back-off; after `syncErrorAfter` in a row an IMAP_ERROR
 *   event goes to the mailer's webhook (once per failing stretch). Rejected credentials
 *   deactivate the mailer (MAILER_DEACTIVATED) and end the watch; deactivated, disabled or
 *   deleted mailers are not watched.
 */
import type { Bus, Kv, Logger } from '@mailyard/platform';
import { type Db, messageIdOf } from '@mailyard/platform';
import { deactivateMailer, imapSync, listWatchableImapMailers, mailers } from '@mailyard/store';
import { imapIncomingEmail } from '../incoming-email';
import { type MailboxClient, MailboxError } from '../mailbox/mailbox-client';
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
      const key = `imap-sync:lease:${m.mailerId}`;
      const token = await this.deps.kv.acquireLock(key, this.deps.settings.syncLeaseMs);
      if (!token) continue;
      const abort = new AbortController();
      const done = this.watch(m.tenantId, m.mailerId, key, token, abort.signal)
        .catch(
          (err) => void this.deps.logger.error('live sync watch crashed', { mailer_id: m.mailerId, err }),
        )
        .finally(() => {
          this.watches.delete(m.mailerId);
          syncWatched.set(this.watches.size);
          void this.deps.kv.releaseLock(key, token).catch(() => false);
        });
      this.watches.set(m.mailerId, { abort, done });
      syncWatched.set(this.watches.size);
    }
  }

  private async watch(tenantId: string, mailerId: string, key: string, token: string, signal: AbortSignal) {
    const { settings, logger, kv, db } = this.deps;
    let failures = 0;
    let reported = false;
    const renew = () => kv.extendLock(key, token, settings.syncLeaseMs).catch(() => false);
    while (!signal.aborted) {
      const mailer = await mailers.get(db, tenantId, mailerId);
      if (!mailer || mailer.state !== 'active' || !mailer.webhook) return;
      let mailbox: MailboxClient | null = null;
      try {
        mailbox = await this.deps.openMailbox(mailer);
        const box = await mailbox.openFolder('INBOX');
        failures = 0;
        reported = false;
        let state = await imapSync.state(db, mailerId);
        if (!state || state.uidvalidity !== box.uidValidity) {
          state = { uidvalidity: box.uidValidity, lastUid: Math.max(0, box.uidNext - 1) };
          await imapSync.saveState(db, tenantId, mailerId, state.uidvalidity, state.lastUid);
        }
        while (!signal.aborted) {
          if (!(await renew())) return; // the lease went to another replica
          const refs = await mailbox.listAfter(state.lastUid);
          const uids = refs.map((r) => r.uid).sort((a, b) => a - b);
          for await (const msg of mailbox.fetch(uids)) {
            await this.post(tenantId, mailerId, mailer.email, msg.uid, box.uidValidity, msg.source);
            state.lastUid = Math.max(state.lastUid, msg.uid);
          }
          await mailbox.waitForChange(
            Math.min(settings.syncPollMs, Math.floor(settings.syncLeaseMs / 3)),
            signal,
          );
        }
      } catch (err) {
        const kind = err instanceof MailboxError ? err.kind : 'transient';
        const message = err instanceof Error ? err.message : String(err);
        if (kind === 'auth') {
          await deactivateMailer(db, tenantId, mailerId, 'provider_auth_error', message);
          logger.warn('live sync: IMAP authentication rejected; mailer deactivated', { mailer_id: mailerId });
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
        await sleep(Math.min(300_000, settings.syncRetryBaseMs * 2 ** Math.min(failures - 1, 8)), signal);
        if (!(await renew())) return;
      } finally {
        await mailbox?.close().catch(() => {});
      }
    }
  }

  /** Posts a new message once per Message-ID (store: outbox row and read mark in one transaction). */
  private async post(
    tenantId: string,
    mailerId: string,
    email: string,
    uid: number,
    uidValidity: string,
    source: Buffer,
  ): Promise<void> {
    const body = await imapIncomingEmail(source, { mailerId, email, folder: 'INBOX' });
    const posted = await imapSync.postNew(this.deps.db, {
      tenantId,
      mailerId,
      messageId: messageIdOf(source) || `uid:${uidValidity}:${uid}`,
      uidvalidity: uidValidity,
      uid,
      message: { mailer_id: mailerId, event: 'INCOMING_EMAIL', body },
    });
    if (posted) syncPosted.inc();
  }
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
