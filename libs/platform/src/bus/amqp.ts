import { type BusEnvelope, Exchange, type ExchangeName } from '@mailyard/contracts';
import amqp, {
  type Channel,
  type ChannelModel,
  type ConfirmChannel,
  type ConsumeMessage,
  type Options,
} from 'amqplib';
import type { Logger } from '../logger/logger';
import {
  type ConsumerSettings,
  checkDelay,
  consumerSettings,
  decodeEnvelope,
  delayQueueName,
  errorMessage,
  onHandlerFailure,
  parkingQueueName,
  placeholderEnvelope,
  runHandler,
} from './delivery';
import type { Bus, ConsumeOptions, Consumer, Handler, ParkedMessage } from './types';

export interface AmqpBusOptions {
  /** How long the first connection may take, retries included (default 30 s). */
  connectTimeoutMs?: number;
  /** How long `publish`/`consume` wait for a lost connection to come back (default 30 s). */
  publishTimeoutMs?: number;
  /** How long a publish waits for the broker's confirm (default 30 s). */
  confirmTimeoutMs?: number;
  /** Reconnect backoff: first delay and cap (defaults 100 ms and 5 s), with jitter. */
  reconnectMinMs?: number;
  reconnectMaxMs?: number;
  /** AMQP heartbeat in seconds unless the URL sets `heartbeat` (default 10). */
  heartbeatSeconds?: number;
  /** Shown by `rabbitmqctl list_connections client_properties` (default "mailyard"). */
  connectionName?: string;
}

/** Header names this bus sets on messages. */
export const Headers = {
  traceparent: 'traceparent',
  failures: 'x-failures',
  parkedReason: 'x-parked-reason',
  originalExchange: 'x-original-exchange',
  originalRoutingKey: 'x-original-routing-key',
} as const;

const CONNECT_SOCKET_TIMEOUT_MS = 10_000;
const EXCHANGES: readonly ExchangeName[] = [Exchange.commands, Exchange.events];
/** Work and parking queues: classic durable, no arguments (so any declarer agrees). */
const QUEUE_OPTIONS: Options.AssertQueue = { durable: true };

/** The URL with its password replaced, for logs and error messages. */
export function safeUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '<unparseable AMQP URL>';
  }
}

/**
 * Connects to RabbitMQ (retrying until `connectTimeoutMs`) and returns the bus. After that
 * the bus reconnects by itself whenever the connection drops.
 */
export async function openAmqpBus(url: string, logger: Logger, opts: AmqpBusOptions = {}): Promise<Bus> {
  const bus = new AmqpBus(url, logger, opts);
  await bus.start();
  return bus;
}

interface Link {
  model: ChannelModel;
  publisher: ConfirmChannel;
  /** Delay queues declared on this connection. */
  declared: Map<string, Promise<void>>;
  lost: boolean;
}

interface Waiter {
  resolve: (link: Link) => void;
  reject: (err: Error) => void;
}

class AmqpBus implements Bus {
  readonly kind = 'amqp' as const;
  private readonly url: string;
  private readonly shownUrl: string;
  private readonly o: Required<AmqpBusOptions>;
  private link: Link | null = null;
  /** Set by close(): no reconnects, no new consumers. */
  private closing = false;
  /** Set once consumers are drained during close(): publishes are refused. */
  private closed = false;
  private attempt = 0;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private readonly waiters = new Set<Waiter>();
  readonly consumers = new Set<AmqpConsumer>();
  private readonly pending = new Set<Promise<void>>();

  constructor(
    url: string,
    readonly logger: Logger,
    opts: AmqpBusOptions,
  ) {
    this.o = {
      connectTimeoutMs: opts.connectTimeoutMs ?? 30_000,
      publishTimeoutMs: opts.publishTimeoutMs ?? 30_000,
      confirmTimeoutMs: opts.confirmTimeoutMs ?? 30_000,
      reconnectMinMs: opts.reconnectMinMs ?? 100,
      reconnectMaxMs: opts.reconnectMaxMs ?? 5_000,
      heartbeatSeconds: opts.heartbeatSeconds ?? 10,
      connectionName: opts.connectionName ?? 'mailyard',
    };
    this.shownUrl = safeUrl(url);
    this.url = withHeartbeat(url, this.o.heartbeatSeconds);
  }

  /** First connection: retried with backoff until connectTimeoutMs, then rejects. */
  async start(): Promise<void> {
    const deadline = Date.now() + this.o.connectTimeoutMs;
    for (;;) {
      try {
        await this.connect();
        this.logger.info('AMQP connected', { url: this.shownUrl });
        return;
      } catch (err) {
        const wait = this.backoff();
        if (isAccessRefused(err) || Date.now() + wait > deadline) {
          throw new Error(`Could not connect to RabbitMQ at ${this.shownUrl}: ${errorMessage(err)}`);
        }
        this.logger.warn('AMQP connection failed; retrying', {
          url: this.shownUrl,
          attempt: this.attempt,
          retry_in_ms: wait,
          error: errorMessage(err),
        });
        await new Promise((r) => setTimeout(r, wait));
      }
    }
  }

  private backoff(): number {
    const base = Math.min(this.o.reconnectMaxMs, this.o.reconnectMinMs * 2 ** Math.min(this.attempt, 20));
    this.attempt++;
    return Math.round(base / 2 + (Math.random() * base) / 2);
  }

  /** Opens the connection and publisher channel, declares exchanges, resumes consumers. */
  private async connect(): Promise<void> {
    const model = await amqp.connect(this.url, {
      clientProperties: { connection_name: this.o.connectionName },
      timeout: CONNECT_SOCKET_TIMEOUT_MS, // TCP connect + AMQP handshake
    });
    let link: Link | undefined;
    let closedEarly = false;
    // Always followed by 'close', which logs the loss.
    model.on('error', (err: Error) => {
      this.logger.debug('AMQP connection error', { url: this.shownUrl, error: errorMessage(err) });
    });
    model.on('close', (err?: Error) => {
      closedEarly = true;
      if (link) this.onConnectionClosed(link, err);
    });
    model.on('blocked', (reason: string) =>
      this.logger.warn('AMQP connection blocked by broker', { reason }),
    );
    model.on('unblocked', () => this.logger.info('AMQP connection unblocked'));
    try {
      const publisher = await model.createConfirmChannel();
      publisher.on('error', (err: Error) => {
        this.logger.warn('AMQP publisher channel error', { error: errorMessage(err) });
      });
      publisher.on('close', () => {
        // Channels close just before their connection does: look again once that is known.
        setImmediate(() => {
          if (!link || link.lost || this.closed) return;
          // A channel-level error on a live connection: start over on a fresh connection.
          this.logger.warn('AMQP publisher channel closed unexpectedly; reconnecting');
          model.close().catch(() => {});
        });
      });
      for (const exchange of EXCHANGES) await publisher.assertExchange(exchange, 'topic', { durable: true });
      if (closedEarly) throw new Error('connection closed during setup');
      if (this.closing) throw new Error('AMQP bus closed during connect');
      link = { model, publisher, declared: new Map(), lost: false };
    } catch (err) {
      await model.close().catch(() => {});
      throw err;
    }
    this.link = link;
    this.attempt = 0;
    for (const w of this.waiters) w.resolve(link);
    this.waiters.clear();
    const consumers = [...this.consumers];
    const resumed = await Promise.allSettled(consumers.map((c) => c.attach(link)));
    resumed.forEach((r, i) => {
      if (r.status === 'rejected') consumers[i]!.attachLater(link, errorMessage(r.reason));
    });
    if (consumers.length > 0) {
      const failed = resumed.filter((r) => r.status === 'rejected').length;
      this.logger.info('AMQP consumers attached', { consumers: consumers.length - failed, failed });
    }
  }

  private onConnectionClosed(link: Link, err?: Error): void {
    if (link.lost) return;
    link.lost = true;
    if (this.link !== link) return;
    this.link = null;
    for (const c of this.consumers) c.detach(link);
    if (this.closing) return;
    this.logger.warn('AMQP connection lost; reconnecting', {
      url: this.shownUrl,
      error: err ? errorMessage(err) : undefined,
    });
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closing || this.reconnectTimer) return;
    const wait = this.backoff();
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      if (this.closing) return;
      this.connect().then(
        () => this.logger.info('AMQP reconnected', { url: this.shownUrl }),
        (err) => {
          this.logger.warn('AMQP reconnect failed', {
            url: this.shownUrl,
            attempt: this.attempt,
            error: errorMessage(err),
          });
          this.scheduleReconnect();
        },
      );
    }, wait);
  }

  /** The live connection, waiting up to publishTimeoutMs for a reconnect. */
  live(what: string): Promise<Link> {
    if (this.link && !this.link.lost) return Promise.resolve(this.link);
    if (this.closing) return Promise.reject(new Error(`${what}: AMQP bus is closed`));
    return new Promise<Link>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        reject(
          new Error(
            `${what}: not connected to RabbitMQ at ${this.shownUrl} after ${this.o.publishTimeoutMs} ms`,
          ),
        );
      }, this.o.publishTimeoutMs);
      const waiter: Waiter = {
        resolve: (link) => {
          clearTimeout(timer);
          resolve(link);
        },
        reject: (err) => {
          clearTimeout(timer);
          reject(err);
        },
      };
      this.waiters.add(waiter);
    });
  }

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
    const done = this.sendUntilWritten(exchange, routingKey, content, options, what);
    this.pending.add(done);
    const forget = () => this.pending.delete(done);
    done.then(forget, forget);
    return done;
  }

  private async sendUntilWritten(
    exchange: string,
    routingKey: string,
    content: Buffer,
    options: Options.Publish,
    what: string,
  ): Promise<void> {
    const deadline = Date.now() + this.o.publishTimeoutMs;
    for (;;) {
      const link = await this.live(what);
      try {
        return await this.confirmPublish(link, exchange, routingKey, content, options, what);
      } catch (err) {
        if (!(err instanceof NotSentError) || Date.now() > deadline || this.closed) throw err;
        // Never written: safe to send again once the connection is replaced.
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  }

  private confirmPublish(
    link: Link,
    exchange: string,
    routingKey: string,
    content: Buffer,
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
        link.publisher.publish(exchange, routingKey, content, options, (err) => {
          if (err) settle(new Error(`${what}: not confirmed by RabbitMQ (${errorMessage(err)})`));
          else settle();
        });
      } catch (err) {
        settle(new NotSentError(`${what}: ${errorMessage(err)}`));
      }
    });
  }

  /** Declares a queue once per connection (the declaration is cached, not the queue). */
  private declare(link: Link, name: string, options: Options.AssertQueue): Promise<void> {
    let declared = link.declared.get(name);
    if (!declared) {
      declared = link.publisher.assertQueue(name, options).then(() => undefined);
      link.declared.set(name, declared);
      declared.catch(() => link.declared.delete(name));
    }
    return declared;
  }

  /**
   * Sends to `<queue>.delay.<ms>`: messages expire after `delayMs` and are dead-lettered
   * through the default exchange back to `queue` (declared too, so they cannot go nowhere).
   */
  async sendDelayed(queue: string, content: Buffer, options: Options.Publish, delayMs: number, what: string) {
    const link = await this.live(what);
    const name = delayQueueName(queue, delayMs);
    await this.declare(link, queue, QUEUE_OPTIONS);
    await this.declare(link, name, {
      durable: true,
      arguments: {
        'x-message-ttl': delayMs,
        'x-dead-letter-exchange': '',
        'x-dead-letter-routing-key': queue,
      },
    });
    await this.send('', name, content, options, what);
  }

  async sendToParking(queue: string, content: Buffer, options: Options.Publish, what: string) {
    const link = await this.live(what);
    await this.declare(link, parkingQueueName(queue), QUEUE_OPTIONS);
    await this.send('', parkingQueueName(queue), content, options, what);
  }

  async publish(exchange: ExchangeName, routingKey: string, envelope: BusEnvelope): Promise<void> {
    if (this.closed) throw new Error('publish: AMQP bus is closed');
    if (!EXCHANGES.includes(exchange)) throw new Error(`publish: unknown exchange "${exchange}"`);
    const content = Buffer.from(JSON.stringify(envelope));
    await this.send(
      exchange,
      routingKey,
      content,
      messageProperties(envelope),
      `publish ${exchange}/${routingKey}`,
    );
  }

  async publishDelayed(queue: string, envelope: BusEnvelope, delayMs: number): Promise<void> {
    if (this.closed) throw new Error('publishDelayed: AMQP bus is closed');
    const ms = checkDelay(delayMs);
    const content = Buffer.from(JSON.stringify(envelope));
    await this.sendDelayed(queue, content, messageProperties(envelope), ms, `publishDelayed ${queue}`);
  }

  /**
   * Rejects when the queue cannot be declared or bound. While RabbitMQ is unreachable it waits
   * up to publishTimeoutMs, then returns a consumer that attaches on the next reconnect.
   */
  async consume<T = unknown>(options: ConsumeOptions, handler: Handler<T>): Promise<Consumer> {
    if (this.closing) throw new Error('consume: AMQP bus is closed');
    const consumer = new AmqpConsumer(this, consumerSettings(options), handler as Handler<unknown>);
    this.consumers.add(consumer);
    try {
      const link = await this.live(`consume ${options.queue}`);
      await consumer.attach(link);
    } catch (err) {
      // A lost connection is retried by the reconnect; anything else is the caller's to fix.
      if (this.link && !this.link.lost) {
        this.consumers.delete(consumer);
        throw new Error(`consume ${options.queue}: ${errorMessage(err)}`);
      }
      if (this.closing) {
        this.consumers.delete(consumer);
        throw err;
      }
    }
    return consumer;
  }

  async parked(queue: string, drain = false): Promise<ParkedMessage[]> {
    const link = await this.live(`parked ${queue}`);
    const name = parkingQueueName(queue);
    const ch = await link.model.createChannel();
    ch.on('error', () => {});
    try {
      await ch.assertQueue(name, QUEUE_OPTIONS);
      const out: ParkedMessage[] = [];
      for (;;) {
        const msg = await ch.get(name, { noAck: false });
        if (!msg) break;
        const raw = msg.content.toString('utf8');
        const reason = headerString(msg.properties.headers?.[Headers.parkedReason]) ?? 'unknown';
        const decoded = decodeEnvelope(raw);
        out.push(
          decoded.ok
            ? { envelope: decoded.envelope, reason }
            : { envelope: placeholderEnvelope(raw, msg.properties.messageId), reason, raw },
        );
      }
      // Unacked messages go back to the queue, in order, when not draining.
      if (drain) ch.ackAll();
      else ch.nackAll(true);
      return out;
    } finally {
      await ch.close().catch(() => {});
    }
  }

  async check(): Promise<void> {
    if (this.closed) throw new Error('AMQP bus is closed');
    if (!this.link || this.link.lost) throw new Error(`not connected to RabbitMQ at ${this.shownUrl}`);
  }

  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    // No reconnect will come for whoever waits for one.
    for (const w of this.waiters) w.reject(new Error('AMQP bus is closed'));
    this.waiters.clear();
    // In-flight handlers may still publish (retries, follow-up events) until they settle.
    await Promise.allSettled([...this.consumers].map((c) => c.cancel()));
    this.closed = true;
    await Promise.allSettled([...this.pending]);
    const link = this.link;
    this.link = null;
    if (link && !link.lost) {
      link.lost = true;
      await link.model
        .close()
        .catch((err) => this.logger.warn('AMQP close failed', { error: errorMessage(err) }));
    }
    this.logger.info('AMQP bus closed', { url: this.shownUrl });
  }
}

/** The channel refused the message (it was closing): nothing reached the broker. */
class NotSentError extends Error {
  override name = 'NotSentError';
}

/** One consumer: its own channel (for prefetch), re-attached after every reconnect. */
class AmqpConsumer implements Consumer {
  private channel: Channel | null = null;
  private tag: string | null = null;
  private attachedTo: Link | null = null;
  private attaching: Promise<void> | null = null;
  private cancelled = false;
  private retries = 0;
  private retryTimer: NodeJS.Timeout | null = null;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly closedChannels = new WeakSet<Channel>();

  constructor(
    private readonly bus: AmqpBus,
    private readonly settings: ConsumerSettings,
    private readonly handler: Handler<unknown>,
  ) {}

  private get log() {
    return this.bus.logger;
  }

  /** Opens a channel on `link`, declares queues and bindings, starts consuming. Idempotent per link. */
  attach(link: Link): Promise<void> {
    if (this.cancelled) return Promise.resolve();
    if (this.attachedTo === link && (this.channel || this.attaching))
      return this.attaching ?? Promise.resolve();
    this.attachedTo = link;
    const attaching = this.open(link).finally(() => {
      if (this.attaching === attaching) this.attaching = null;
    });
    this.attaching = attaching;
    return attaching;
  }

  private async open(link: Link): Promise<void> {
    const { queue, bindings, prefetch } = this.settings;
    const ch = await link.model.createChannel();
    ch.on('error', (err: Error) =>
      this.log.warn('AMQP consumer channel error', { queue, error: errorMessage(err) }),
    );
    ch.on('close', () => {
      this.closedChannels.add(ch);
      this.onChannelClosed(ch, link);
    });
    try {
      await ch.prefetch(prefetch);
      await ch.assertQueue(queue, QUEUE_OPTIONS);
      await ch.assertQueue(parkingQueueName(queue), QUEUE_OPTIONS);
      for (const b of bindings) await ch.bindQueue(queue, b.exchange, b.routingKey);
      this.channel = ch;
      const { consumerTag } = await ch.consume(queue, (msg) => this.onMessage(ch, msg), { noAck: false });
      if (this.cancelled) {
        await ch.close().catch(() => {});
        return;
      }
      this.tag = consumerTag;
      this.retries = 0;
    } catch (err) {
      if (this.channel === ch) this.channel = null;
      await ch.close().catch(() => {});
      throw err;
    }
  }

  /** The connection is gone; its channel and unacked deliveries with it. */
  detach(link: Link): void {
    if (this.attachedTo !== link) return;
    this.channel = null;
    this.tag = null;
    this.attachedTo = null;
  }

  private onChannelClosed(ch: Channel, link: Link): void {
    if (this.channel !== ch) return;
    this.channel = null;
    this.tag = null;
    // Channels close just before their connection does; a lost connection is re-attached by
    // the reconnect, a channel-level failure (e.g. queue deleted) by the consumer itself.
    setImmediate(() => this.attachLater(link, 'consumer channel closed'));
  }

  /** Retries attaching on a live connection with capped backoff (a reconnect also re-attaches). */
  attachLater(link: Link, reason: string): void {
    if (this.cancelled || link.lost || this.retryTimer) return;
    const wait = Math.min(30_000, 200 * 2 ** Math.min(this.retries++, 8));
    this.log.warn('AMQP consumer not attached; retrying', {
      queue: this.settings.queue,
      reason,
      retry_in_ms: wait,
    });
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      if (this.cancelled || link.lost) return;
      this.attach(link).catch((err) => this.attachLater(link, errorMessage(err)));
    }, wait);
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
    const run = this.process(ch, msg).catch((err) => {
      this.log.error('AMQP delivery failed', { queue: this.settings.queue, error: errorMessage(err) });
    });
    this.inFlight.add(run);
    run.finally(() => this.inFlight.delete(run));
  }

  private async process(ch: Channel, msg: ConsumeMessage): Promise<void> {
    const { queue, retryDelaysMs } = this.settings;
    const raw = msg.content.toString('utf8');
    const headers = msg.properties.headers ?? {};
    const decoded = decodeEnvelope(raw);
    if (!decoded.ok) {
      const moved = await this.settle(ch, msg, () =>
        this.bus.sendToParking(
          queue,
          msg.content,
          { ...passOn(msg), headers: { ...ownHeaders(msg), [Headers.parkedReason]: decoded.reason } },
          `park ${queue}`,
        ),
      );
      if (moved) {
        this.log.warn('bus message parked', {
          queue,
          message_id: msg.properties.messageId,
          reason: decoded.reason,
        });
      }
      return;
    }
    const envelope = decoded.envelope;
    const failures = headerNumber(headers[Headers.failures]) ?? 0;
    const exchange = headerString(headers[Headers.originalExchange]) ?? msg.fields.exchange;
    const routingKey = headerString(headers[Headers.originalRoutingKey]) ?? msg.fields.routingKey;
    try {
      await runHandler(this.handler, {
        envelope,
        exchange,
        routingKey,
        failures,
        redelivered: msg.fields.redelivered,
      });
    } catch (err) {
      const next = failures + 1;
      const action = onHandlerFailure(err, next, retryDelaysMs);
      const headersOut = {
        ...ownHeaders(msg),
        [Headers.failures]: next,
        [Headers.originalExchange]: exchange,
        [Headers.originalRoutingKey]: routingKey,
      };
      if ('parkReason' in action) {
        const reason = action.parkReason;
        const moved = await this.settle(ch, msg, () =>
          this.bus.sendToParking(
            queue,
            msg.content,
            { ...passOn(msg), headers: { ...headersOut, [Headers.parkedReason]: reason } },
            `park ${queue}`,
          ),
        );
        if (moved)
          this.log.warn('bus message parked', { queue, message_id: envelope.id, failures: next, reason });
      } else {
        const moved = await this.settle(ch, msg, () =>
          this.bus.sendDelayed(
            queue,
            msg.content,
            { ...passOn(msg), headers: headersOut },
            action.retryInMs,
            `retry ${queue}`,
          ),
        );
        if (moved) {
          this.log.info('bus handler failed; retry scheduled', {
            queue,
            message_id: envelope.id,
            failures: next,
            retry_in_ms: action.retryInMs,
            error: errorMessage(err),
          });
        }
      }
      return;
    }
    safely(() => ch.ack(msg));
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
      safely(() => ch.nack(msg, false, true));
      return false;
    }
    safely(() => ch.ack(msg));
    return true;
  }

  async cancel(): Promise<void> {
    this.cancelled = true;
    this.bus.consumers.delete(this);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    if (this.attaching) await this.attaching.catch(() => {});
    const ch = this.channel;
    const tag = this.tag;
    if (ch && tag) await ch.cancel(tag).catch(() => {});
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
    this.channel = null;
    this.tag = null;
    if (ch) await ch.close().catch(() => {});
  }
}

function messageProperties(envelope: BusEnvelope): Options.Publish {
  const headers: Record<string, unknown> = {};
  if (envelope.traceparent) headers[Headers.traceparent] = envelope.traceparent;
  return {
    persistent: true,
    contentType: 'application/json',
    contentEncoding: 'utf-8',
    messageId: envelope.id,
    type: envelope.type,
    timestamp: Math.floor(Date.now() / 1000),
    headers,
  };
}

/** Properties kept when a message is moved to a delay or parking queue. */
function passOn(msg: ConsumeMessage): Options.Publish {
  const p = msg.properties;
  return {
    persistent: true,
    contentType: p.contentType ?? 'application/json',
    contentEncoding: p.contentEncoding,
    messageId: p.messageId,
    type: p.type,
    timestamp: p.timestamp,
  };
}

/** Our headers only: the broker's x-death bookkeeping is not carried along. */
function ownHeaders(msg: ConsumeMessage): Record<string, unknown> {
  const headers: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(msg.properties.headers ?? {})) {
    if (k !== 'x-death' && !k.startsWith('x-first-death') && !k.startsWith('x-last-death')) headers[k] = v;
  }
  return headers;
}

function headerString(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (Buffer.isBuffer(v)) return v.toString('utf8');
  return undefined;
}

function headerNumber(v: unknown): number | undefined {
  const n = typeof v === 'number' ? v : typeof v === 'string' ? Number(v) : Number.NaN;
  return Number.isInteger(n) && n >= 0 ? n : undefined;
}

/** ack/nack on a channel that died throws; the broker redelivers those messages anyway. */
function safely(fn: () => void): void {
  try {
    fn();
  } catch {
    // channel closed: nothing to settle
  }
}

/** Wrong credentials or no rights on the vhost: retrying cannot help. */
function isAccessRefused(err: unknown): boolean {
  return /ACCESS[-_]REFUSED|\b403\b/.test(errorMessage(err));
}

function withHeartbeat(url: string, seconds: number): string {
  try {
    const u = new URL(url);
    if (!u.searchParams.has('heartbeat')) u.searchParams.set('heartbeat', String(seconds));
    return u.toString();
  } catch {
    return url;
  }
}
