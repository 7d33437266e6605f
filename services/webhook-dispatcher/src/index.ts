import { Queue, WorkQueues } from '@mailyard/contracts';
import type { RunningService, ServiceContext } from '@mailyard/platform';
import { AccountBatcher } from './batch';
import { createDispatchHandler } from './consumer';
import { deliver } from './deliver';
import { flushAccount } from './flush';
import { deliveriesPlanned, eventsFlushed } from './metrics';
import { outboundGuard } from './outbound';
import type { DispatchEvent } from './route-event';
import { dispatcherSettings } from './settings';
import { DeliveryWorker } from './worker';

export { routeEvents } from './route-event';
export { signWebhook } from './sign';
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
  const guard = outboundGuard(settings.allowInsecure, ctx.config);
  const worker = new DeliveryWorker({
    db,
    sealer,
    logger,
    settings,
    deliver: (req) => deliver(req, { guard, timeoutMs: settings.timeoutMs }),
  });
  const batcher = new AccountBatcher<DispatchEvent>({
    maxItems: settings.batchMax,
    waitMs: settings.batchWaitMs,
    flush: async (tenantId, events) => {
      const ids = await flushAccount({ db, sealer }, tenantId, events);
      eventsFlushed.inc(events.length);
      deliveriesPlanned.inc(ids.length);
      if (ids.length > 0) worker.poll();
    },
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
