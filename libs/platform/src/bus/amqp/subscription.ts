/**
 * Transient subscriptions (Bus.subscribe) on RabbitMQ: per subscription one channel and one
 * server-named queue, exclusive, auto-delete, non-durable, bounded by x-max-length with
 * drop-head (a subscriber that falls behind loses the oldest messages, the broker never piles
 * them up). Declared again on every reconnect (the queue died with the old connection;
 * reattach.ts).
 * Messages are acknowledged as soon as the synchronous handler returned, the acks of one turn
 * of the event loop in one `multiple` frame; prefetch bounds what is in flight to this process.
 */
import type { Channel, ConsumeMessage } from 'amqplib';
import type { Logger } from '../../logger/logger';
import { type SubscriptionSettings, errorMessage, handleTransient } from '../delivery';
import type { Consumer, SubscriptionHandler } from '../types';
import type { Link } from './connection';
import { ReattachingChannel } from './reattach';

/** Unacknowledged messages the broker may push to one subscription. */
const PREFETCH = 500;

export class AmqpSubscription extends ReattachingChannel implements Consumer {
  protected readonly retryWarning = 'AMQP subscription not attached; retrying';
  /** Highest delivery tag handled and not yet acknowledged, per channel. */
  private pendingAck = new WeakMap<Channel, number>();

  constructor(
    private readonly settings: SubscriptionSettings,
    private readonly handler: SubscriptionHandler<unknown>,
    protected readonly log: Logger,
    private readonly forget: (s: AmqpSubscription) => void,
  ) {
    super();
  }

  protected logFields(): Record<string, unknown> {
    return {};
  }

  /** Closes the channel: the exclusive auto-delete queue goes with it. */
  async cancel(): Promise<void> {
    if (this.cancelled) return;
    this.forget(this);
    await this.stopAttaching();
    const ch = this.channel;
    this.channel = null;
    if (ch) await ch.close().catch(() => {});
  }

  protected async open(link: Link): Promise<void> {
    const { bindings, maxQueued } = this.settings;
    const ch = await link.model.createChannel();
    ch.on('error', (err: Error) =>
      this.log.warn('AMQP subscription channel error', { error: errorMessage(err) }),
    );
    ch.on('close', () => {
      if (this.channel !== ch) return;
      this.channel = null;
      // A lost connection is re-attached by the reconnect; a channel-level failure here.
      setImmediate(() => this.attachLater(link, 'subscription channel closed'));
    });
    try {
      await ch.prefetch(PREFETCH);
      const { queue } = await ch.assertQueue('', {
        exclusive: true,
        autoDelete: true,
        durable: false,
        arguments: { 'x-max-length': maxQueued, 'x-overflow': 'drop-head' },
      });
      for (const b of bindings) await ch.bindQueue(queue, b.exchange, b.routingKey);
      this.channel = ch;
      await ch.consume(queue, (msg) => this.onMessage(ch, msg), { noAck: false });
      if (this.cancelled) {
        this.channel = null;
        await ch.close().catch(() => {});
        return;
      }
      this.attached();
    } catch (err) {
      if (this.channel === ch) this.channel = null;
      await ch.close().catch(() => {});
      throw err;
    }
  }

  private onMessage(ch: Channel, msg: ConsumeMessage | null): void {
    if (msg === null) {
      ch.close().catch(() => {});
      return;
    }
    if (!this.cancelled) {
      const delivery = {
        exchange: msg.fields.exchange,
        routingKey: msg.fields.routingKey,
        failures: 0,
        redelivered: msg.fields.redelivered,
      };
      handleTransient(msg.content.toString('utf8'), delivery, this.handler, this.log);
    }
    const scheduled = this.pendingAck.has(ch);
    this.pendingAck.set(ch, msg.fields.deliveryTag);
    if (scheduled) return;
    setImmediate(() => {
      const tag = this.pendingAck.get(ch);
      this.pendingAck.delete(ch);
      if (tag === undefined) return;
      try {
        ch.ack({ fields: { deliveryTag: tag } } as ConsumeMessage, true);
      } catch {
        // channel closed: its queue is gone with it
      }
    });
  }
}
