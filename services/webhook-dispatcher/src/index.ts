import { Queue, WorkQueues } from '@mailyard/contracts';
import { type RunningService, type ServiceContext, guardedAgents } from '@mailyard/platform';
import { AccountBatcher } from './batch';
import { createDispatchHandler } from './consumer';
import { deliver } from './deliver';
import { type AccountBatch, flushAccounts } from './flush';
import { deliveriesPlanned, eventsFlushed } from './metrics';
import { GroupWriter } from './recorder';
import type { DispatchEvent } from './route-event';
import { dispatcherSettings } from './settings';
import { DeliveryWorker } from './worker';

export { routeEvents } from './route-event';
export { dispatcherSettings } from './settings';

/** Bus handler failures (database unavailable) are redelivered after these delays, then parked. */
export const DISPATCH_HANDLER_RETRY_DELAYS_MS = [1_000, 5_000, 30_000, 120_000, 600_000];

/**
 * Starts the webhook dispatcher: consumes `webhook-dispatcher.events`, batches per account,
 * stores deliveries and runs their attempts and retries from the database (docs/webhooks.md).
 */
export async function start(ctx: ServiceContext): Promise<RunningService> {
  const { db, bus, logger, sealer, config } = ctx;
  const settings = dispatcherSettings(config);
  const agents = guardedAgents({
    allowPrivate: settings.allowInsecure,
    dns: ctx.config,
    connectTimeoutMs: settings.timeoutMs,
    agent: { keepAlive: true, maxSockets: 64 },
  });
  const worker = new DeliveryWorker({
    db,
    sealer,
    logger,
    settings,
    deliver: (req) => deliver(req, { agents, timeoutMs: settings.timeoutMs }),
  });
  // Batches flushed at the same moment (of any accounts) are stored by one statement.
  const store = new GroupWriter<AccountBatch>(async (batches) => {
    const ids = await flushAccounts({ db, sealer, maxPerBody: settings.batchMax }, batches);
    eventsFlushed.inc(batches.reduce((n, b) => n + b.events.length, 0));
    deliveriesPlanned.inc(ids.length);
    if (ids.length > 0) worker.poll();
  }, null);
  const batcher = new AccountBatcher<DispatchEvent>({
    maxItems: settings.batchMax,
    waitMs: settings.batchWaitMs,
    flush: (tenantId, events) => store.add({ tenantId, events }),
  });
  const consumer = await bus.consume(
    {
      ...WorkQueues.webhookDispatcher,
      prefetch: settings.prefetch,
      retryDelaysMs: DISPATCH_HANDLER_RETRY_DELAYS_MS,
    },
    createDispatchHandler({ batcher, logger }),
  );
  worker.start();
  logger.info('webhook dispatcher started', {
    batch_max: settings.batchMax,
    batch_wait_ms: settings.batchWaitMs,
    endpoint_concurrency: settings.endpointConcurrency,
  });
  return {
    name: 'webhook-dispatcher',
    banner: [
      `consuming ${Queue.webhookDispatcher}; batches of ${settings.batchMax} events or ${settings.batchWaitMs} ms per account; ${settings.retryDelaysS.length} retries${settings.allowInsecure ? '; WEBHOOK_ALLOW_INSECURE: http and private targets allowed' : ''}`,
    ],
    async stop() {
      const cancelling = consumer.cancel();
      await batcher.drain();
      await cancelling;
      await batcher.drain();
      await worker.stop();
    },
  };
}
