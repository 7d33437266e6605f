/**
 * services/imap-backfill (docs/architecture.md "The pieces"): history backfill jobs and live mailbox sync of
 * IMAP-capable mailers (IMAP, and OAuth mailboxes through the Gmail API and Microsoft Graph),
 * posting to the mailer's own webhook through the webhook dispatcher.
 * Runs alone (`src/main.ts`, ops port for /healthz /readyz /metrics) or inside the all-in-one
 * process (scripts/start.ts). docs/backfill.md describes the whole feature.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { type RunningService, type ServiceContext, startOutboxRelay } from '@mailyard/platform';
import { oauthAccessTokens } from '@mailyard/providers';
import { oauthGrantStore } from '@mailyard/store';
import { JobWorker } from './backfill/job-worker';
import { LiveSync } from './live/live-sync';
import { mailboxOpener } from './open-mailbox';
import { backfillSettings } from './settings';

export { JobWorker } from './backfill/job-worker';
export { LiveSync } from './live/live-sync';
export { mailboxOpener } from './open-mailbox';
export { backfillSettings } from './settings';
export type { MailboxClient } from './mailbox/mailbox-client';
export type { BackfillSettings } from './settings';

/**
 * Starts the history backfill worker and, unless IMAP_SYNC=0, live sync; an outbox relay
 * publishes the MAILER_DEACTIVATED events they write.
 */
export async function start(ctx: ServiceContext): Promise<RunningService> {
  const { db, bus, kv, logger, sealer, config } = ctx;
  const settings = backfillSettings(config);
  // MAILER_DEACTIVATED is written to the outbox with the state change (libs/store deactivateMailer).
  const relay = startOutboxRelay(ctx);
  // OAuth mailboxes: tokens refreshed ahead of expiry; a revoked grant deactivates the mailer.
  const tokens = oauthAccessTokens({
    grants: oauthGrantStore(db, sealer),
    kv,
    logger,
    settings: settings.providers,
    onOutboxWrite: () => relay.notify(),
  });
  const openMailbox = mailboxOpener(db, sealer, settings, { tokens, logger });
  const owner = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  const worker = new JobWorker({ db, bus, logger, settings, openMailbox, owner });
  worker.start();
  const sync = settings.sync ? new LiveSync({ db, kv, bus, logger, settings, openMailbox }) : null;
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
