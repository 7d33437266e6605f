/** The connection to RabbitMQ: first connect, reconnect with capped backoff, close. */
import amqp, { type ChannelModel, type ConfirmChannel } from 'amqplib';
import type { Logger } from '../../logger/logger';
import { redactUrl } from '../../logger/redact';
import { backoffMs, jittered } from '../../retry/backoff';
import { errorMessage } from '../delivery';
import { coalesceFrameWrites } from './coalesce-writes';
import type { AmqpSettings } from './options';
import { declareExchanges, declareWorkQueue } from './topology';

const CONNECT_SOCKET_TIMEOUT_MS = 10_000;

/** One connection with its publisher channel; replaced as a whole when lost. */
export interface Link {
  model: ChannelModel;
  publisher: ConfirmChannel;
  /** Queues declared on this connection (see topology.ts). */
  declared: Map<string, Promise<void>>;
  lost: boolean;
}

export interface LinkEvents {
  /** A new connection is live; awaited before a (re)connect counts as done. */
  up(link: Link): Promise<void>;
  /** The live connection dropped (not called for the close by `end()`). */
  down(link: Link): void;
}

interface Waiter {
  resolve: (link: Link) => void;
  reject: (err: Error) => void;
}

export { redactUrl as safeUrl };

export class Connection {
  readonly shownUrl: string;
  private readonly url: string;
  private link: Link | null = null;
  private closingFlag = false;
  private closedFlag = false;
  private attempt = 0;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private readonly waiters = new Set<Waiter>();

  constructor(
    url: string,
    private readonly logger: Logger,
    private readonly o: AmqpSettings,
    private readonly events: LinkEvents,
  ) {
    this.shownUrl = redactUrl(url);
    this.url = withHeartbeat(url, o.heartbeatSeconds);
  }

  /** Set by `beginClose()`: no reconnects, no new consumers. */
  get closing(): boolean {
    return this.closingFlag;
  }

  /** Set by `refusePublishes()` once consumers are drained. */
  get closed(): boolean {
    return this.closedFlag;
  }

  /** The live connection, if any. */
  get current(): Link | null {
    return this.link && !this.link.lost ? this.link : null;
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

  /** The live connection, waiting up to publishTimeoutMs for a reconnect. */
  live(what: string): Promise<Link> {
    const link = this.current;
    if (link) return Promise.resolve(link);
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

  /** Throws unless connected and open. */
  check(): void {
    if (this.closed) throw new Error('AMQP bus is closed');
    if (!this.current) throw new Error(`not connected to RabbitMQ at ${this.shownUrl}`);
  }

  /** Stops reconnecting; returns false when already closing. */
  beginClose(): boolean {
    if (this.closingFlag) return false;
    this.closingFlag = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    // No reconnect will come for whoever waits for one.
    for (const w of this.waiters) w.reject(new Error('AMQP bus is closed'));
    this.waiters.clear();
    return true;
  }

  refusePublishes(): void {
    this.closedFlag = true;
  }

  /** Closes the connection for good. */
  async end(): Promise<void> {
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

  private backoff(): number {
    const { reconnectMinMs: minMs, reconnectMaxMs: maxMs } = this.o;
    return jittered(backoffMs(this.attempt++, { minMs, maxMs, maxDoublings: 20 }));
  }

  /** Opens the connection and publisher channel, declares exchanges, then reports it up. */
  private async connect(): Promise<void> {
    const model = await amqp.connect(this.url, {
      clientProperties: { connection_name: this.o.connectionName },
      timeout: CONNECT_SOCKET_TIMEOUT_MS, // TCP connect + AMQP handshake
    });
    // A batch of publishes (or acks) leaves in one socket write, not one per message.
    coalesceFrameWrites(model);
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
      await declareExchanges(publisher);
      for (const q of this.o.queues) await declareWorkQueue(publisher, q.queue, q.bindings);
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
    await this.events.up(link);
  }

  private onConnectionClosed(link: Link, err?: Error): void {
    if (link.lost) return;
    link.lost = true;
    if (this.link !== link) return;
    this.link = null;
    this.events.down(link);
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
