/** The broker objects the bus relies on, and how they are declared. */
import { Exchange, type ExchangeName } from '@mailyard/contracts';
import type { Channel, Options } from 'amqplib';
import type { Binding } from '../types';

export const EXCHANGES: readonly ExchangeName[] = [Exchange.commands, Exchange.events];
/** Work and parking queues: classic durable, no arguments (so any declarer agrees). */
const QUEUE_OPTIONS: Options.AssertQueue = { durable: true };

// consumerSettings() (../delivery.ts) refuses work queues named like these.
const parkingQueueName = (queue: string) => `${queue}.parking`;
const delayQueueName = (queue: string, delayMs: number) => `${queue}.delay.${delayMs}`;

/** A connection's publisher channel and the queues already declared through it. */
interface Declarer {
  publisher: Channel;
  declared: Map<string, Promise<void>>;
}

export async function declareExchanges(ch: Channel): Promise<void> {
  for (const exchange of EXCHANGES) await ch.assertExchange(exchange, 'topic', { durable: true });
}

/** The consumer's queue, its parking queue and its bindings. */
export async function declareWorkQueue(
  ch: Channel,
  queue: string,
  bindings: readonly Binding[],
): Promise<void> {
  await ch.assertQueue(queue, QUEUE_OPTIONS);
  await assertParkingQueue(ch, queue);
  for (const b of bindings) await ch.bindQueue(queue, b.exchange, b.routingKey);
}

/** Declares `<queue>.parking` and returns its name. */
export async function assertParkingQueue(ch: Channel, queue: string): Promise<string> {
  const name = parkingQueueName(queue);
  await ch.assertQueue(name, QUEUE_OPTIONS);
  return name;
}

/** `<queue>.parking`, declared once per connection; returns its name. */
export async function declareParkingQueue(link: Declarer, queue: string): Promise<string> {
  const name = parkingQueueName(queue);
  await declareOnce(link, name, QUEUE_OPTIONS);
  return name;
}

/**
 * `<queue>.delay.<ms>`, declared once per connection; returns its name. Messages expire after
 * `delayMs` and are dead-lettered through the default exchange back to `queue` (declared
 * too, so they cannot go nowhere).
 */
export async function declareDelayQueue(link: Declarer, queue: string, delayMs: number): Promise<string> {
  const name = delayQueueName(queue, delayMs);
  await declareOnce(link, queue, QUEUE_OPTIONS);
  await declareOnce(link, name, {
    durable: true,
    arguments: {
      'x-message-ttl': delayMs,
      'x-dead-letter-exchange': '',
      'x-dead-letter-routing-key': queue,
    },
  });
  return name;
}

/** Declares a queue once per connection (the declaration is cached, not the queue). */
function declareOnce(link: Declarer, name: string, options: Options.AssertQueue): Promise<void> {
  let declared = link.declared.get(name);
  if (!declared) {
    declared = link.publisher.assertQueue(name, options).then(() => undefined);
    link.declared.set(name, declared);
    declared.catch(() => link.declared.delete(name));
  }
  return declared;
}
