import { WorkQueues } from '@mailyard/contracts';
import type { Logger } from '../logger/logger';
import type { AmqpBusOptions } from './amqp';
import { createMemoryBus } from './memory';
import type { Bus } from './types';

export * from './types';
export { envelope } from './envelope';
export type { AmqpBusOptions } from './amqp';
export { createMemoryBus } from './memory';
export { topicMatches } from './topic-match';
export { DEFAULT_PREFETCH, DEFAULT_RETRY_DELAYS_MS } from './delivery';

/**
 * RabbitMQ when AMQP_URL is set, else the in-process bus (docs/architecture.md "Stores and the bus"). The RabbitMQ
 * client (./amqp, amqplib) is loaded only then: an embedded process never loads it.
 */
export async function openBus(
  config: { AMQP_URL?: string },
  logger: Logger,
  options?: AmqpBusOptions,
): Promise<Bus> {
  const queues = options?.queues ?? Object.values(WorkQueues);
  if (config.AMQP_URL) {
    const { openAmqpBus } = await import('./amqp');
    return openAmqpBus(config.AMQP_URL, logger, { ...options, queues });
  }
  logger.info('AMQP_URL not set: using the in-process bus');
  return createMemoryBus(logger, { queues });
}
