import type { BusEnvelope, ExchangeName } from '@mailyard/contracts';
import type { Queryable } from '../db/types';

/**
 * Writes a message to the transactional outbox. Call it with the transaction that writes the
 * domain rows: the message is published by the OutboxRelay if and only if that commits.
 * Returns the outbox row id.
 */
export async function enqueueOutbox(
  tx: Queryable,
  exchange: ExchangeName,
  routingKey: string,
  envelope: BusEnvelope,
): Promise<number> {
  if (!routingKey) throw new Error('enqueueOutbox: routingKey must not be empty');
  const res = await tx.query<{ id: number | string }>(
    'INSERT INTO outbox (exchange, routing_key, message) VALUES ($1, $2, $3::jsonb) RETURNING id',
    [exchange, routingKey, JSON.stringify(envelope)],
  );
  const id = res.rows[0]?.id;
  if (id === undefined) throw new Error('enqueueOutbox: INSERT returned no id');
  return Number(id);
}
