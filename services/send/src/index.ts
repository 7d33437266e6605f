import { Queue, WorkQueues } from '@mailyard/contracts';
import {
  type OutboxRelay,
  type RunningService,
  type ServiceContext,
  reputationSettingsOf,
  startOutboxRelay,
} from '@mailyard/platform';
import { ByteBudget } from '@mailyard/platform';
import { type OAuthAccessTokens, oauthAccessTokens } from '@mailyard/providers';
import { oauthGrantStore, setReputationSettings } from '@mailyard/store';
import { type ConsumerDeps, createSendHandler } from './consumer';
import { EventWriter } from './emit-event';
import { CopyLoader, RequestCache } from './load-copy';
import { MailerCache } from './mailer-cache';
import { PhishingVerdicts } from './phishing-verdicts';
import { recommandUnfinishedCopies } from './recover-in-process';
import { startScheduledRelease } from './scheduled-release';
import { type SendSettings, sendSettings } from './settings';
import { Transports } from './transports';

export { checkPhishing, checkPhishingAsync } from './phishing';
export { sendSettings } from './settings';

/**
 * Handler failures that are not about the message (database or broker unavailable) are
 * redelivered after these delays, then parked in `send.commands.parking`.
 */
const RELAY_COALESCE_MS = 20;

export const SEND_HANDLER_RETRY_DELAYS_MS = [1_000, 5_000, 30_000, 120_000, 600_000];

/** What the handler of one send service needs (its own caches, writer, loader and transports). */
export function consumerDeps(
  ctx: ServiceContext,
  settings: SendSettings,
  transports: Transports,
  afterCommit?: () => void,
): ConsumerDeps {
  const { db, bus, logger } = ctx;
  return {
    db,
    bus,
    logger,
    sealer: ctx.sealer,
    settings,
    transports,
    copies: new CopyLoader(db, new RequestCache()),
    mailers: new MailerCache(),
    events: new EventWriter(db, { eventsPerMessage: settings.eventsPerMessage }),
    verdicts: new PhishingVerdicts(),
    budget: new ByteBudget(settings.inflightBytes),
    copySlots: new ByteBudget(settings.concurrency),
    ...(afterCommit ? { afterCommit } : {}),
  };
}

/**
 * The token sources of OAuth mailers (libs/providers): one factory per process, so concurrent
 * sends of one mailer share a refresh. A deactivation it writes (revoked grant) calls `onOutboxWrite`.
 */
export function sendTokens(
  ctx: ServiceContext,
  settings: SendSettings,
  onOutboxWrite?: () => void,
): OAuthAccessTokens {
  return oauthAccessTokens({
    grants: oauthGrantStore(ctx.db, ctx.sealer),
    kv: ctx.kv,
    logger: ctx.logger,
    settings: settings.providers,
    ...(onOutboxWrite ? { onOutboxWrite } : {}),
  });
}

/**
 * Starts the send service: consumes `send.commands` (SEND_CONCURRENCY in flight), delivers
 * through the pooled transports, runs an OutboxRelay for the events it writes and the release
 * of scheduled sends.
 */
export async function start(ctx: ServiceContext): Promise<RunningService> {
  const { config, logger, db, bus } = ctx;
  const settings = sendSettings(config);
  // The thresholds the event writer pauses senders with (docs/deliverability.md).
  setReputationSettings(reputationSettingsOf(config));
  // Started below, once the queue is bound; a wake before then has nothing to wake (the relay's
  // first poll takes every row committed until it starts).
  let relay: OutboxRelay | null = null;
  const transports = new Transports(
    settings,
    sendTokens(ctx, settings, () => relay?.notify()),
  );
  // Events committed within RELAY_COALESCE_MS wake the relay once: one outbox batch instead of a
  // relay transaction per committed attempt (the events reach the bus at most that much later).
  let wakeTimer: NodeJS.Timeout | null = null;
  const wakeRelay = () => {
    wakeTimer ??= setTimeout(() => {
      wakeTimer = null;
      relay?.notify();
    }, RELAY_COALESCE_MS);
  };
  const handler = createSendHandler(consumerDeps(ctx, settings, transports, wakeRelay));
  if (bus.kind === 'memory') {
    const recommanded = await recommandUnfinishedCopies(db, settings.maxAttempts);
    if (recommanded > 0)
      logger.info('re-commanded copies left unfinished by the last run', { copies: recommanded });
  }
  const consumer = await bus.consume(
    {
      ...WorkQueues.send,
      prefetch: settings.concurrency,
      retryDelaysMs: SEND_HANDLER_RETRY_DELAYS_MS,
    },
    handler,
  );
  // Only now: the queue and its binding exist before this relay publishes anything (a command
  // published to the exchange while no queue is bound would be dropped by the broker).
  relay = startOutboxRelay(ctx);
  // Scheduled sends reach the outbox when due (one replica, leased: scheduled-release.ts).
  const release = startScheduledRelease({ db, kv: ctx.kv, logger, afterRelease: () => relay?.notify() });
  const route = settings.relayUrl ? 'relay' : `direct MX (port ${settings.mxPort})`;
  logger.info('send service started', { concurrency: settings.concurrency, domain_mailers: route });
  return {
    name: 'send',
    banner: [
      `consuming ${Queue.send} (concurrency ${settings.concurrency}); domain mailers via ${route}; max ${settings.maxAttempts} attempts`,
    ],
    async stop() {
      await release.stop();
      await consumer.cancel();
      if (wakeTimer) clearTimeout(wakeTimer);
      transports.close();
      await relay?.stop();
    },
  };
}
