import { WorkQueues } from '@mailyard/contracts';
import type { Logger } from '../logger/logger';
import { type AmqpBusOptions, openAmqpBus } from './amqp';
import { createMemoryBus } from './memory';
import type { Bus } from './types';

export * from './types';
export { envelope } from './envelope';
export { openAmqpBus, safeUrl, type AmqpBusOptions } from './amqp';
export { createMemoryBus } from './memory';
export { topicMatches } from './topic-match';
export { DEFAULT_PREFETCH, DEFAULT_RETRY_DELAYS_MS } from './delivery';

/** RabbitMQ when AMQP_URL is set, else the in-process bus (DESIGN.md "Data stores"). */
export async function openBus(
  config: { AMQP_URL?: string },
  logger: Logger,
  options?: AmqpBusOptions,
): Promise<Bus> {
  const queues = options?.queues ?? Object.values(WorkQueues);
  if (config.AMQP_URL) return openAmqpBus(config.AMQP_URL, logger, { ...options, queues });
  logger.info('AMQP_URL not set: using the in-process bus');
  return createMemoryBus(logger, { queues });
}
