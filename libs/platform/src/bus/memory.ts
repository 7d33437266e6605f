import type { BusEnvelope, ExchangeName, QueueDeclaration } from '@mailyard/contracts';
import type { Logger } from '../logger/logger';
import {
  type ConsumerSettings,
  checkDelay,
  consumerSettings,
  errorMessage,
  handleMessage,
  handleTransient,
  parkedMessage,
  subscriptionSettings,
} from './delivery';
import { topicMatches } from './topic-match';
import type {
  Bus,
  ConsumeOptions,
  Consumer,
  Handler,
  ParkedMessage,
  SubscribeOptions,
  SubscriptionHandler,
} from './types';

/** setTimeout's limit; longer delays are chained. */
const MAX_TIMER_MS = 2_147_483_647;

interface StoredMessage {
  /** JSON text: every delivery parses its own copy, so consumers never share objects. */
  body: string;
  exchange: string;
  routingKey: string;
  failures: number;
}

interface MemoryQueue {
  messages: StoredMessage[];
  consumers: MemoryConsumer[];
  /** Round-robin position among consumers. */
  next: number;
}

interface BindingEntry {
  exchange: string;
  pattern: string;
  queue: string;
}

/**
 * A transient subscription: its own bounded list of messages (the oldest dropped past
 * maxQueued, like x-max-length), handed to the handler on a later turn, never retried.
 */
interface MemorySubscription {
  bindings: SubscribeOptions['bindings'];
  maxQueued: number;
  handler: SubscriptionHandler<unknown>;
  pending: StoredMessage[];
  scheduled: boolean;
  cancelled: boolean;
}

class MemoryConsumer implements Consumer {
  active = 0;
  cancelled = false;
  readonly inFlight = new Set<Promise<void>>();

  constructor(
    readonly settings: ConsumerSettings,
    readonly handler: Handler<unknown>,
    private readonly detach: (c: MemoryConsumer) => void,
  ) {}

  async cancel(): Promise<void> {
    if (!this.cancelled) {
      this.cancelled = true;
      this.detach(this);
    }
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }
}

/**
 * In-process bus with the RabbitMQ bus's contract (used when AMQP_URL is unset): topic
 * routing to bound queues, per-consumer prefetch, delayed retries, parking. Queued messages
 * live in memory only and are lost when the process exits.
 */
export function createMemoryBus(logger: Logger, opts: { queues?: readonly QueueDeclaration[] } = {}): Bus {
  const queues = new Map<string, MemoryQueue>();
  const bindings: BindingEntry[] = [];
  const parkedByQueue = new Map<string, ParkedMessage[]>();
  const timers = new Set<NodeJS.Timeout>();
  const consumers = new Set<MemoryConsumer>();
  const subscriptions = new Set<MemorySubscription>();
  let closed = false;

  const drainSubscription = (sub: MemorySubscription) => {
    sub.scheduled = false;
    const batch = sub.pending;
    sub.pending = [];
    for (const m of batch) {
      if (sub.cancelled || closed) return;
      const delivery = { exchange: m.exchange, routingKey: m.routingKey, failures: 0, redelivered: false };
      handleTransient(m.body, delivery, sub.handler, logger);
    }
  };

  const offer = (sub: MemorySubscription, message: StoredMessage) => {
    if (sub.pending.length >= sub.maxQueued) sub.pending.shift();
    sub.pending.push(message);
    if (!sub.scheduled) {
      sub.scheduled = true;
      setImmediate(() => drainSubscription(sub));
    }
  };

  const queueOf = (name: string): MemoryQueue => {
    let q = queues.get(name);
    if (!q) {
      q = { messages: [], consumers: [], next: 0 };
      queues.set(name, q);
    }
    return q;
  };

  const declareQueue = (queue: string, queueBindings: QueueDeclaration['bindings']): MemoryQueue => {
    const q = queueOf(queue);
    for (const { exchange, routingKey } of queueBindings) {
      const known = bindings.some(
        (b) => b.exchange === exchange && b.pattern === routingKey && b.queue === queue,
      );
      if (!known) bindings.push({ exchange, pattern: routingKey, queue });
    }
    return q;
  };
  for (const q of opts.queues ?? []) declareQueue(q.queue, q.bindings);

  const assertOpen = () => {
    if (closed) throw new Error('memory bus is closed');
  };

  const later = (ms: number, fn: () => void) => {
    const step = Math.min(ms, MAX_TIMER_MS);
    const timer = setTimeout(() => {
      timers.delete(timer);
      if (closed) return;
      if (ms > step) later(ms - step, fn);
      else fn();
    }, step);
    timers.add(timer);
  };

  const enqueue = (queueName: string, message: StoredMessage) => {
    queueOf(queueName).messages.push(message);
    setImmediate(() => pump(queueName));
  };

  const park = (queueName: string, parked: ParkedMessage) => {
    let list = parkedByQueue.get(queueName);
    if (!list) {
      list = [];
      parkedByQueue.set(queueName, list);
    }
    list.push(parked);
    logger.warn('bus message parked', {
      queue: queueName,
      message_id: parked.envelope.id,
      reason: parked.reason,
    });
  };

  const pump = (queueName: string) => {
    const q = queues.get(queueName);
    if (!q || closed) return;
    while (q.messages.length > 0) {
      const consumer = pickConsumer(q);
      if (!consumer) return;
      dispatch(queueName, consumer, q.messages.shift()!);
    }
  };

  const pickConsumer = (q: MemoryQueue): MemoryConsumer | undefined => {
    for (let i = 0; i < q.consumers.length; i++) {
      const c = q.consumers[(q.next + i) % q.consumers.length]!;
      if (!c.cancelled && c.active < c.settings.prefetch) {
        q.next = (q.next + i + 1) % q.consumers.length;
        return c;
      }
    }
    return undefined;
  };

  const dispatch = (queueName: string, consumer: MemoryConsumer, message: StoredMessage) => {
    consumer.active++;
    const run = deliver(queueName, consumer, message)
      .catch((err) => {
        logger.error('memory bus delivery failed', { queue: queueName, error: errorMessage(err) });
      })
      .finally(() => {
        consumer.active--;
        consumer.inFlight.delete(run);
        pump(queueName);
      });
    consumer.inFlight.add(run);
  };

  const deliver = async (queueName: string, consumer: MemoryConsumer, message: StoredMessage) => {
    const { body, exchange, routingKey, failures } = message;
    const delivery = { exchange, routingKey, failures, redelivered: false };
    const outcome = await handleMessage(body, delivery, consumer.handler, consumer.settings.retryDelaysMs);
    switch (outcome.kind) {
      case 'done':
        return;
      case 'invalid':
        park(queueName, parkedMessage(body, outcome.reason));
        return;
      case 'park':
        park(queueName, { envelope: outcome.envelope, reason: outcome.reason });
        return;
      case 'retry':
        logger.info('bus handler failed; retry scheduled', {
          queue: queueName,
          message_id: outcome.envelope.id,
          failures: outcome.failures,
          retry_in_ms: outcome.retryInMs,
          error: errorMessage(outcome.error),
        });
        later(outcome.retryInMs, () => enqueue(queueName, { ...message, failures: outcome.failures }));
    }
  };

  return {
    kind: 'memory',

    async publish(exchange: ExchangeName, routingKey: string, envelope: BusEnvelope): Promise<void> {
      assertOpen();
      const body = JSON.stringify(envelope);
      const targets = new Set<string>();
      for (const b of bindings) {
        if (b.exchange === exchange && topicMatches(b.pattern, routingKey)) targets.add(b.queue);
      }
      for (const queueName of targets) enqueue(queueName, { body, exchange, routingKey, failures: 0 });
      for (const sub of subscriptions) {
        if (sub.bindings.some((b) => b.exchange === exchange && topicMatches(b.routingKey, routingKey)))
          offer(sub, { body, exchange, routingKey, failures: 0 });
      }
    },

    async publishDelayed(queue: string, envelope: BusEnvelope, delayMs: number): Promise<void> {
      assertOpen();
      const ms = checkDelay(delayMs);
      const body = JSON.stringify(envelope);
      queueOf(queue);
      // Like a dead-lettered message on RabbitMQ: default exchange, routing key = queue.
      later(ms, () => enqueue(queue, { body, exchange: '', routingKey: queue, failures: 0 }));
    },

    async consume<T = unknown>(options: ConsumeOptions, handler: Handler<T>): Promise<Consumer> {
      assertOpen();
      const settings = consumerSettings(options);
      const q = declareQueue(settings.queue, settings.bindings);
      const consumer = new MemoryConsumer(settings, handler as Handler<unknown>, (c) => {
        consumers.delete(c);
        q.consumers = q.consumers.filter((x) => x !== c);
      });
      consumers.add(consumer);
      q.consumers.push(consumer);
      setImmediate(() => pump(settings.queue));
      return consumer;
    },

    async subscribe<T = unknown>(
      options: SubscribeOptions,
      handler: SubscriptionHandler<T>,
    ): Promise<Consumer> {
      assertOpen();
      const settings = subscriptionSettings(options);
      const sub: MemorySubscription = {
        ...settings,
        handler: handler as SubscriptionHandler<unknown>,
        pending: [],
        scheduled: false,
        cancelled: false,
      };
      subscriptions.add(sub);
      return {
        async cancel() {
          sub.cancelled = true;
          sub.pending = [];
          subscriptions.delete(sub);
        },
      };
    },

    async parked(queue: string, drain = false): Promise<ParkedMessage[]> {
      assertOpen();
      const list = parkedByQueue.get(queue) ?? [];
      if (drain) parkedByQueue.delete(queue);
      return list.map((p) => JSON.parse(JSON.stringify(p)) as ParkedMessage);
    },

    async check(): Promise<void> {
      assertOpen();
    },

    async close(): Promise<void> {
      if (closed) return;
      await Promise.all([...consumers].map((c) => c.cancel()));
      for (const sub of subscriptions) sub.cancelled = true;
      subscriptions.clear();
      closed = true;
      for (const t of timers) clearTimeout(t);
      timers.clear();
      queues.clear();
    },
  };
}
