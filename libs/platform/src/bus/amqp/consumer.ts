/**
 * Consumers: one channel each (for prefetch), re-attached after every reconnect (reattach.ts). A message is
 * acked once its handler finished, the acks of a turn of the event loop coalesced (ack-window.ts).
 */
import type { Channel, ConsumeMessage, Options } from 'amqplib';
import type { Logger } from '../../logger/logger';
import { type ConsumerSettings, errorMessage, handleMessage } from '../delivery';
import type { Consumer, Handler } from '../types';
import { AckWindow } from './ack-window';
import type { Link } from './connection';
import { deliveryOf, parkingProperties, retryProperties } from './message';
import type { Publisher } from './publisher';
import { ReattachingChannel, attachEach } from './reattach';
import { declareWorkQueue } from './topology';

export interface ConsumerDeps {
  logger: Logger;
  /** Moves failed messages to delay and parking queues. */
  publisher: Pick<Publisher, 'sendDelayed' | 'sendToParking'>;
  /** Called once on cancel, so the bus stops re-attaching this consumer. */
  forget(consumer: AmqpConsumer): void;
}

/** Attaches consumers to a new connection; any that fail keep retrying on their own. */
export async function attachAll(consumers: AmqpConsumer[], link: Link, logger: Logger): Promise<void> {
  const failed = await attachEach(consumers, link);
  if (consumers.length > 0) {
    logger.info('AMQP consumers attached', { consumers: consumers.length - failed, failed });
  }
}

export class AmqpConsumer extends ReattachingChannel implements Consumer {
  protected readonly retryWarning = 'AMQP consumer not attached; retrying';
  private tag: string | null = null;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly closedChannels = new WeakSet<Channel>();
  /** The acks still to send, per channel (delivery tags are the channel's). */
  private readonly acks = new WeakMap<Channel, AckWindow>();
  private readonly flushing = new Set<Channel>();

  constructor(
    private readonly settings: ConsumerSettings,
    private readonly handler: Handler<unknown>,
    private readonly deps: ConsumerDeps,
  ) {
    super();
  }

  protected get log(): Logger {
    return this.deps.logger;
  }

  protected logFields(): Record<string, unknown> {
    return { queue: this.settings.queue };
  }

  /** The lost connection took the consumer tag with its channel. */
  protected override detached(): void {
    this.tag = null;
  }

  async cancel(): Promise<void> {
    this.deps.forget(this);
    await this.stopAttaching();
    const ch = this.channel;
    const tag = this.tag;
    if (ch && tag) await ch.cancel(tag).catch(() => {});
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
    this.channel = null;
    this.tag = null;
    if (ch) {
      this.flushAcks(ch);
      await ch.close().catch(() => {});
    }
  }

  protected async open(link: Link): Promise<void> {
    const { queue, bindings, prefetch } = this.settings;
    const ch = await link.model.createChannel();
    ch.on('error', (err: Error) =>
      this.log.warn('AMQP consumer channel error', { queue, error: errorMessage(err) }),
    );
    ch.on('close', () => {
      this.closedChannels.add(ch);
      this.onChannelClosed(ch, link);
    });
    this.acks.set(ch, new AckWindow());
    try {
      await ch.prefetch(prefetch);
      await declareWorkQueue(ch, queue, bindings);
      this.channel = ch;
      const { consumerTag } = await ch.consume(queue, (msg) => this.onMessage(ch, msg), { noAck: false });
      if (this.cancelled) {
        await ch.close().catch(() => {});
        return;
      }
      this.tag = consumerTag;
      this.attached();
    } catch (err) {
      if (this.channel === ch) this.channel = null;
      await ch.close().catch(() => {});
      throw err;
    }
  }

  private onChannelClosed(ch: Channel, link: Link): void {
    if (this.channel !== ch) return;
    this.channel = null;
    this.tag = null;
    // Channels close just before their connection does; a lost connection is re-attached by
    // the reconnect, a channel-level failure (e.g. queue deleted) by the consumer itself.
    setImmediate(() => this.attachLater(link, 'consumer channel closed'));
  }

  private onMessage(ch: Channel, msg: ConsumeMessage | null): void {
    if (msg === null) {
      // The broker cancelled us (queue deleted); the channel close handler re-attaches.
      this.log.warn('AMQP consumer cancelled by broker', { queue: this.settings.queue });
      ch.close().catch(() => {});
      return;
    }
    if (this.cancelled) {
      safely(() => ch.nack(msg, false, true));
      return;
    }
    this.acks.get(ch)?.received(msg.fields.deliveryTag);
    const run = this.process(ch, msg).catch((err) => {
      this.log.error('AMQP delivery failed', { queue: this.settings.queue, error: errorMessage(err) });
    });
    this.inFlight.add(run);
    run.finally(() => this.inFlight.delete(run));
  }

  private async process(ch: Channel, msg: ConsumeMessage): Promise<void> {
    const { queue, retryDelaysMs } = this.settings;
    const delivery = deliveryOf(msg);
    const outcome = await handleMessage(msg.content.toString('utf8'), delivery, this.handler, retryDelaysMs);
    if (outcome.kind === 'done') {
      this.ack(ch, msg);
      return;
    }
    if (outcome.kind === 'invalid') {
      const { reason } = outcome;
      if (await this.park(ch, msg, parkingProperties(msg, reason))) {
        this.log.warn('bus message parked', { queue, message_id: msg.properties.messageId, reason });
      }
      return;
    }
    const { envelope, failures } = outcome;
    const failure = { exchange: delivery.exchange, routingKey: delivery.routingKey, failures };
    if (outcome.kind === 'park') {
      const { reason } = outcome;
      if (await this.park(ch, msg, parkingProperties(msg, reason, failure))) {
        this.log.warn('bus message parked', { queue, message_id: envelope.id, failures, reason });
      }
      return;
    }
    const { retryInMs } = outcome;
    const properties = retryProperties(msg, failure);
    const moved = await this.settle(ch, msg, () =>
      this.deps.publisher.sendDelayed(queue, msg.content, properties, retryInMs, `retry ${queue}`),
    );
    if (moved) {
      this.log.info('bus handler failed; retry scheduled', {
        queue,
        message_id: envelope.id,
        failures,
        retry_in_ms: retryInMs,
        error: errorMessage(outcome.error),
      });
    }
  }

  private park(ch: Channel, msg: ConsumeMessage, properties: Options.Publish): Promise<boolean> {
    const { queue } = this.settings;
    return this.settle(ch, msg, () =>
      this.deps.publisher.sendToParking(queue, msg.content, properties, `park ${queue}`),
    );
  }

  /**
   * Moves the message (retry or parking) and acks the original only once the move is
   * confirmed; returns whether it moved. If the move fails the original is requeued after a
   * pause (or, with its channel gone, redelivered by the broker): never lost, maybe redone.
   */
  private async settle(ch: Channel, msg: ConsumeMessage, move: () => Promise<void>): Promise<boolean> {
    // The channel died while the handler ran: the broker redelivers the original, moving it
    // as well would only make a duplicate.
    if (this.closedChannels.has(ch)) return false;
    try {
      await move();
    } catch (err) {
      this.log.error('bus could not move a failed message; it will be redelivered', {
        queue: this.settings.queue,
        message_id: msg.properties.messageId,
        error: errorMessage(err),
      });
      if (!this.closedChannels.has(ch)) await new Promise((r) => setTimeout(r, 1_000));
      this.acks.get(ch)?.forget(msg.fields.deliveryTag);
      safely(() => ch.nack(msg, false, true));
      return false;
    }
    this.ack(ch, msg);
    return true;
  }

  /** Acks `msg` with the others finished in this turn of the event loop (ack-window.ts). */
  private ack(ch: Channel, msg: ConsumeMessage): void {
    const window = this.acks.get(ch);
    if (!window) {
      safely(() => ch.ack(msg));
      return;
    }
    window.done(msg.fields.deliveryTag);
    if (this.flushing.has(ch)) return;
    this.flushing.add(ch);
    setImmediate(() => {
      this.flushing.delete(ch);
      this.flushAcks(ch);
    });
  }

  private flushAcks(ch: Channel): void {
    const frames = this.acks.get(ch)?.flush() ?? [];
    if (frames.length === 0 || this.closedChannels.has(ch)) return;
    for (const { tag, multiple } of frames) safely(() => ch.ack(ackable(tag), multiple));
  }
}

/** What amqplib's ack reads of a message: its delivery tag. */
function ackable(tag: number): ConsumeMessage {
  return { fields: { deliveryTag: tag } } as ConsumeMessage;
}

/** ack/nack on a channel that died throws; the broker redelivers those messages anyway. */
function safely(fn: () => void): void {
  try {
    fn();
  } catch {
    // channel closed: nothing to settle
  }
}
