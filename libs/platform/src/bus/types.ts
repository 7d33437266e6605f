import type { BusEnvelope, ExchangeName } from '@mailyard/contracts';

export interface Binding {
  exchange: ExchangeName;
  /** Topic pattern: words separated by `.`, `*` matches one word, `#` zero or more. */
  routingKey: string;
}

export interface ConsumeOptions {
  /** Durable queue owned by the consuming service. */
  queue: string;
  bindings: readonly Binding[];
  /** Unacknowledged messages in flight for this consumer (default 16). */
  prefetch?: number;
  /**
   * Delays before redelivering a message whose handler threw. When they are used up the
   * message goes to the parking queue `<queue>.parking`. Default: 1s, 5s, 30s.
   */
  retryDelaysMs?: number[];
}

/**
 * A transient subscription (Bus.subscribe): a live view of messages, not work. Its queue is the
 * process's own (AMQP: server-named, exclusive, auto-delete, non-durable), exists only while the
 * subscription does, and is declared again after a reconnect: messages published while it is
 * not attached are not seen. Messages are acknowledged on receipt, never retried or parked.
 */
export interface SubscribeOptions {
  bindings: readonly Binding[];
  /**
   * Messages the queue holds for a subscriber that falls behind; past it the oldest are dropped
   * (AMQP x-max-length, drop-head). Default 10,000.
   */
  maxQueued?: number;
}

/** Runs once per message, synchronously; what it throws is logged and the message dropped. */
export type SubscriptionHandler<T = unknown> = (delivery: Delivery<T>) => void;

export interface Delivery<T = unknown> {
  envelope: BusEnvelope<T>;
  exchange: string;
  routingKey: string;
  /** How many times a handler already failed on this message (0 on first delivery). */
  failures: number;
  /** True when the broker redelivers after a consumer died without acking. */
  redelivered: boolean;
}

export type Handler<T = unknown> = (delivery: Delivery<T>) => Promise<void>;

/** Thrown by a handler for a message that can never succeed: parked at once, no retry. */
export class PermanentError extends Error {
  override name = 'PermanentError';
}

export interface Consumer {
  /** Stops taking new messages and waits for in-flight handlers to settle. */
  cancel(): Promise<void>;
}

export interface ParkedMessage {
  /**
   * The parked envelope. For a message that was not a valid envelope this is a placeholder
   * (`type: 'invalid'`, payload = the parsed JSON or the text) and `raw` holds the body.
   */
  envelope: BusEnvelope;
  reason: string;
  /** The message body as received, set only when it was not a valid envelope. */
  raw?: string;
}

/**
 * The bus between services (docs/architecture.md "Stores and the bus"). Implementations: RabbitMQ (amqplib) and
 * in-process; both pass `test/bus.contract.ts`.
 */
export interface Bus {
  readonly kind: 'amqp' | 'memory';
  /** Resolves once the broker has confirmed the message (persistent, to a topic exchange). */
  publish(exchange: ExchangeName, routingKey: string, envelope: BusEnvelope): Promise<void>;
  /** Delivers `envelope` straight to `queue` after `delayMs` (TTL queue + dead-letter). */
  publishDelayed(queue: string, envelope: BusEnvelope, delayMs: number): Promise<void>;
  /** Declares the queue and its bindings, then runs `handler` per message; ack on resolve. */
  consume<T = unknown>(options: ConsumeOptions, handler: Handler<T>): Promise<Consumer>;
  /** A transient subscription (SubscribeOptions); cancel() removes its queue. */
  subscribe<T = unknown>(options: SubscribeOptions, handler: SubscriptionHandler<T>): Promise<Consumer>;
  /** Messages moved to `<queue>.parking` (removes them when `drain` is true). */
  parked(queue: string, drain?: boolean): Promise<ParkedMessage[]>;
  check(): Promise<void>;
  close(): Promise<void>;
}
