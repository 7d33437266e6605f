/**
 * services/imap-backfill (DESIGN.md "Shape"): history backfill jobs and live mailbox sync of
 * IMAP-capable mailers (IMAP, and OAuth mailboxes through the Gmail API and Microsoft Graph),
 * posting to the mailer's own webhook through the webhook dispatcher.
 * Runs alone (`src/main.ts`, ops port for /healthz /readyz /metrics) or inside the all-in-one
 * process (scripts/start.ts). docs/backfill.md describes the whole feature.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { OutboxRelay, type RunningService, type ServiceContext } from '@mailyard/platform';
import { oauthAccessTokens } from '@mailyard/providers';
import { oauthGrantStore } from '@mailyard/store';
import { JobWorker } from './backfill/job-worker';
import { LiveSync } from './live/live-sync';
import { type OpenMailbox, mailboxOpener } from './open-mailbox';
import { backfillSettings } from './settings';

export { JobWorker } from './backfill/job-worker';
export { LiveSync } from './live/live-sync';
export { mailboxOpener } from './open-mailbox';
export { backfillSettings } from './settings';
export type { MailboxClient } from './mailbox/mailbox-client';
export type { BackfillSettings } from './settings';

export interface StartOptions {
  /** Replaces the provider clients (tests of the worker against a stand-in mailbox). */
  openMailbox?: OpenMailbox;
  /** How often live sync re-reads which mailers to watch (default 5 s). */
  syncScanMs?: number;
}

export async function start(ctx: ServiceContext, opts: StartOptions = {}): Promise<RunningService> {
  const { db, bus, kv, logger, sealer, config } = ctx;
  const settings = backfillSettings(config);
  // MAILER_DEACTIVATED is written to the outbox with the state change (libs/store deactivateMailer).
  const relay = new OutboxRelay(db, bus, logger, {
    pollMs: config.OUTBOX_POLL_MS,
    batchSize: config.OUTBOX_BATCH,
    retentionMs: config.OUTBOX_RETENTION_MS,
  });
  relay.start();
  // OAuth mailboxes: tokens refreshed ahead of expiry; a revoked grant deactivates the mailer.
  const tokens = oauthAccessTokens({
    grants: oauthGrantStore(db, sealer),
    kv,
    logger,
    settings: settings.providers,
    onOutboxWrite: () => relay.notify(),
  });
  const openMailbox = opts.openMailbox ?? mailboxOpener(db, sealer, settings, { tokens, logger });
  const owner = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  const worker = new JobWorker({ db, bus, logger, settings, openMailbox, owner });
  worker.start();
  const sync = settings.sync
    ? new LiveSync({
        db,
        kv,
        bus,
        logger,
        settings,
        openMailbox,
        ...(opts.syncScanMs ? { scanMs: opts.syncScanMs } : {}),
      })
    : null;
  sync?.start();
  logger.info('imap-backfill started', { concurrency: settings.concurrency, live_sync: settings.sync });
  return {
    name: 'imap-backfill',
    banner: [
      `history backfill: ${settings.concurrency} jobs at once, lease ${settings.leaseMs} ms; live sync ${settings.sync ? 'on' : 'off'}`,
    ],
    async stop() {
      await Promise.all([worker.stop(), sync?.stop()]);
      await relay.stop();
    },
  };
}
