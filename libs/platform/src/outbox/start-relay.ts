/**
 * The outbox relay of a service: every service that writes outbox rows runs one, with the
 * options of the core settings (OUTBOX_POLL_MS, OUTBOX_BATCH, OUTBOX_RETENTION_MS; docs/configuration.md).
 * One function, so no service picks its own options and a new setting reaches them all.
 */
import type { ServiceContext } from '../runtime/context';
import { OutboxRelay } from './relay';

/** A relay over the service's database and bus, already polling; `stop()` it with the service. */
export function startOutboxRelay(ctx: Pick<ServiceContext, 'config' | 'db' | 'bus' | 'logger'>): OutboxRelay {
  const { config } = ctx;
  const relay = new OutboxRelay(ctx.db, ctx.bus, ctx.logger, {
    pollMs: config.OUTBOX_POLL_MS,
    batchSize: config.OUTBOX_BATCH,
    retentionMs: config.OUTBOX_RETENTION_MS,
  });
  relay.start();
  return relay;
}
