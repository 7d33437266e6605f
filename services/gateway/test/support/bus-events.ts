import { type BusEnvelope, Exchange } from '@mailyard/contracts';
import { type OutboxRelay, type ServiceContext, startOutboxRelay } from '@mailyard/platform';
import { uniqueName } from '@mailyard/testkit/servers';

export interface CapturedEvents<T = unknown> {
  received: BusEnvelope<T>[];
  /** Resolves with the first event matching `pred` (already received or arriving within `timeoutMs`). */
  waitFor(pred: (e: BusEnvelope<T>) => boolean, timeoutMs?: number): Promise<BusEnvelope<T>>;
  stop(): Promise<void>;
}

/** Consumes `routingKey` on Exchange.events into a fresh test queue of the context's bus. */
export async function captureEvents<T = unknown>(
  ctx: ServiceContext,
  routingKey: string,
): Promise<CapturedEvents<T>> {
  const received: BusEnvelope<T>[] = [];
  const consumer = await ctx.bus.consume<T>(
    { queue: uniqueName('test.capture'), bindings: [{ exchange: Exchange.events, routingKey }] },
    async (d) => {
      received.push(d.envelope);
    },
  );
  return {
    received,
    async waitFor(pred, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const hit = received.find(pred);
        if (hit) return hit;
        if (Date.now() > deadline)
          throw new Error(
            `no ${routingKey} event matched within ${timeoutMs} ms; got ${JSON.stringify(received)}`,
          );
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    stop: () => consumer.cancel(),
  };
}

/**
 * The outbox relay the gateway process runs (startGateway() does not start one), keeping published
 * rows (marked sent) so outboxRows still lists them.
 */
export function startRelay(ctx: ServiceContext): OutboxRelay {
  const config = { ...ctx.config, OUTBOX_POLL_MS: 50, OUTBOX_BATCH: 100, OUTBOX_RETENTION_MS: 3_600_000 };
  return startOutboxRelay({ ...ctx, config });
}

/** Outbox rows (sent or not) with this routing key, oldest first. */
export async function outboxRows(
  ctx: ServiceContext,
  routingKey: string,
): Promise<Array<{ message: BusEnvelope; sent: boolean }>> {
  const { rows } = await ctx.db.query<{ message: BusEnvelope; sent_at: Date | null }>(
    'SELECT message, sent_at FROM outbox WHERE routing_key = $1 ORDER BY id',
    [routingKey],
  );
  return rows.map((r) => ({ message: r.message, sent: r.sent_at !== null }));
}
