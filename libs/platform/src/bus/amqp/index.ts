/** The RabbitMQ bus (amqplib): one connection per bus, re-established whenever it drops. */
import type { BusEnvelope, ExchangeName } from '@mailyard/contracts';
import type { Logger } from '../../logger/logger';
import { checkDelay, consumerSettings, errorMessage, subscriptionSettings } from '../delivery';
import type {
  Bus,
  ConsumeOptions,
  Consumer,
  Handler,
  ParkedMessage,
  SubscribeOptions,
  SubscriptionHandler,
} from '../types';
import { Connection } from './connection';
import { AmqpConsumer, attachAll } from './consumer';
import { encode } from './message';
import { type AmqpBusOptions, withDefaults } from './options';
import { readParked } from './parked';
import { Publisher } from './publisher';
import { attachEach } from './reattach';
import { AmqpSubscription } from './subscription';
import { EXCHANGES } from './topology';

export { safeUrl } from './connection';
export type { AmqpBusOptions } from './options';

/**
 * Connects to RabbitMQ (retrying until `connectTimeoutMs`) and returns the bus. After that
 * the bus reconnects by itself whenever the connection drops.
 */
export async function openAmqpBus(url: string, logger: Logger, opts: AmqpBusOptions = {}): Promise<Bus> {
  const bus = new AmqpBus(url, logger, opts);
  await bus.connection.start();
  return bus;
}

class AmqpBus implements Bus {
  readonly kind = 'amqp' as const;
  readonly connection: Connection;
  private readonly publisher: Publisher;
  private readonly consumers = new Set<AmqpConsumer>();
  private readonly subscriptions = new Set<AmqpSubscription>();

  constructor(
    url: string,
    private readonly logger: Logger,
    opts: AmqpBusOptions,
  ) {
    const settings = withDefaults(opts);
    this.connection = new Connection(url, logger, settings, {
      up: async (link) => {
        await attachAll([...this.consumers], link, logger);
        await this.attachSubscriptions(link);
      },
      down: (link) => {
        for (const c of this.consumers) c.detach(link);
        for (const s of this.subscriptions) s.detach(link);
      },
    });
    this.publisher = new Publisher(this.connection, settings);
  }

  /**
   * Not `async` on purpose: an async function keeps its arguments alive until it returns, i.e.
   * the whole envelope until the broker's confirm; this one lets go of it once encoded.
   */
  publish(exchange: ExchangeName, routingKey: string, envelope: BusEnvelope): Promise<void> {
    if (this.connection.closed) return Promise.reject(new Error('publish: AMQP bus is closed'));
    if (!EXCHANGES.includes(exchange))
      return Promise.reject(new Error(`publish: unknown exchange "${exchange}"`));
    let encoded: ReturnType<typeof encode>;
    try {
      encoded = encode(envelope);
    } catch (err) {
      return Promise.reject(err);
    }
    return this.publisher.send(
      exchange,
      routingKey,
      encoded.content,
      encoded.properties,
      `publish ${exchange}/${routingKey}`,
    );
  }

  async publishDelayed(queue: string, envelope: BusEnvelope, delayMs: number): Promise<void> {
    if (this.connection.closed) throw new Error('publishDelayed: AMQP bus is closed');
    const ms = checkDelay(delayMs);
    const { content, properties } = encode(envelope);
    await this.publisher.sendDelayed(queue, content, properties, ms, `publishDelayed ${queue}`);
  }

  /**
   * Rejects when the queue cannot be declared or bound. While RabbitMQ is unreachable it waits
   * up to publishTimeoutMs, then returns a consumer that attaches on the next reconnect.
   */
  async consume<T = unknown>(options: ConsumeOptions, handler: Handler<T>): Promise<Consumer> {
    if (this.connection.closing) throw new Error('consume: AMQP bus is closed');
    const consumer = new AmqpConsumer(consumerSettings(options), handler as Handler<unknown>, {
      logger: this.logger,
      publisher: this.publisher,
      forget: (c) => this.consumers.delete(c),
    });
    this.consumers.add(consumer);
    try {
      const link = await this.connection.live(`consume ${options.queue}`);
      await consumer.attach(link);
    } catch (err) {
      // A lost connection is retried by the reconnect; anything else is the caller's to fix.
      if (this.connection.current) {
        this.consumers.delete(consumer);
        throw new Error(`consume ${options.queue}: ${errorMessage(err)}`);
      }
      if (this.connection.closing) {
        this.consumers.delete(consumer);
        throw err;
      }
    }
    return consumer;
  }

  /**
   * Like consume: rejects when the queue cannot be declared on a live connection; while RabbitMQ
   * is unreachable returns a subscription that attaches on the next reconnect.
   */
  async subscribe<T = unknown>(
    options: SubscribeOptions,
    handler: SubscriptionHandler<T>,
  ): Promise<Consumer> {
    if (this.connection.closing) throw new Error('subscribe: AMQP bus is closed');
    const sub = new AmqpSubscription(
      subscriptionSettings(options),
      handler as SubscriptionHandler<unknown>,
      this.logger,
      (s) => this.subscriptions.delete(s),
    );
    this.subscriptions.add(sub);
    try {
      const link = await this.connection.live('subscribe');
      await sub.attach(link);
    } catch (err) {
      if (this.connection.current || this.connection.closing) {
        this.subscriptions.delete(sub);
        throw new Error(`subscribe: ${errorMessage(err)}`);
      }
    }
    return sub;
  }

  /** Declares every subscription's queue again on a new connection; failures retry on their own. */
  private async attachSubscriptions(link: Parameters<AmqpSubscription['attach']>[0]): Promise<void> {
    await attachEach([...this.subscriptions], link);
  }

  async parked(queue: string, drain = false): Promise<ParkedMessage[]> {
    const link = await this.connection.live(`parked ${queue}`);
    return readParked(link, queue, drain);
  }

  async check(): Promise<void> {
    this.connection.check();
  }

  async close(): Promise<void> {
    if (!this.connection.beginClose()) return;
    // In-flight handlers may still publish (retries, follow-up events) until they settle.
    await Promise.allSettled([...this.consumers].map((c) => c.cancel()));
    await Promise.allSettled([...this.subscriptions].map((s) => s.cancel()));
    this.connection.refusePublishes();
    await this.publisher.settled();
    await this.connection.end();
  }
}
