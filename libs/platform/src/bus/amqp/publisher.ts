/** Publishing on the connection's confirm channel. */
import type { Options } from 'amqplib';
import { errorMessage } from '../delivery';
import type { Connection, Link } from './connection';
import type { AmqpSettings } from './options';
import { declareDelayQueue, declareParkingQueue } from './topology';

/** The channel refused the message (it was closing): nothing reached the broker. */
class NotSentError extends Error {
  override name = 'NotSentError';
}

export class Publisher {
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly connection: Connection,
    private readonly o: Pick<AmqpSettings, 'publishTimeoutMs' | 'confirmTimeoutMs'>,
  ) {}

  /**
   * Publishes on the confirm channel and resolves on the broker's ack. A nack, a timeout or a
   * connection lost before the confirm rejects: the message may or may not have been routed.
   * A message the channel refused to send (already closed) waits for the reconnect instead.
   */
  send(
    exchange: string,
    routingKey: string,
    content: Buffer,
    options: Options.Publish,
    what: string,
  ): Promise<void> {
    // The content is held only until the channel took it (a confirm can take a while under load,
    // and whatever survives young-generation collections meanwhile is only freed by a full GC).
    const done = this.sendUntilWritten(exchange, routingKey, { content }, options, what);
    this.pending.add(done);
    const forget = () => this.pending.delete(done);
    done.then(forget, forget);
    return done;
  }

  /** Sends straight to `queue` after `delayMs`, through its delay queue. */
  async sendDelayed(queue: string, content: Buffer, options: Options.Publish, delayMs: number, what: string) {
    const link = await this.connection.live(what);
    const name = await declareDelayQueue(link, queue, delayMs);
    await this.send('', name, content, options, what);
  }

  async sendToParking(queue: string, content: Buffer, options: Options.Publish, what: string) {
    const link = await this.connection.live(what);
    const name = await declareParkingQueue(link, queue);
    await this.send('', name, content, options, what);
  }

  /** Resolves once every publish in flight has settled. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.pending]);
  }

  private async sendUntilWritten(
    exchange: string,
    routingKey: string,
    message: { content: Buffer | null },
    options: Options.Publish,
    what: string,
  ): Promise<void> {
    const deadline = Date.now() + this.o.publishTimeoutMs;
    for (;;) {
      const link = await this.connection.live(what);
      try {
        return await this.confirmPublish(link, exchange, routingKey, message, options, what);
      } catch (err) {
        if (!(err instanceof NotSentError) || Date.now() > deadline || this.connection.closed) throw err;
        // Never written: safe to send again once the connection is replaced.
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  }

  private confirmPublish(
    link: Link,
    exchange: string,
    routingKey: string,
    message: { content: Buffer | null },
    options: Options.Publish,
    what: string,
  ): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let settled = false;
      const settle = (err?: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (err) reject(err);
        else resolve();
      };
      const timer = setTimeout(
        () => settle(new Error(`${what}: no confirm from RabbitMQ within ${this.o.confirmTimeoutMs} ms`)),
        this.o.confirmTimeoutMs,
      );
      try {
        link.publisher.publish(exchange, routingKey, message.content!, options, (err) => {
          if (err) settle(new Error(`${what}: not confirmed by RabbitMQ (${errorMessage(err)})`));
          else settle();
        });
        message.content = null; // written: never sent again
      } catch (err) {
        settle(new NotSentError(`${what}: ${errorMessage(err)}`));
      }
    });
  }
}
