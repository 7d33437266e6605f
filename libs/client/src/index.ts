/** @mailyard/client: see README.md. */
export * from './client';
export * from './admin';
export * from './errors';
export { paginate, type Page } from './paginate';
export { parseRetryAfter, type RetryOptions } from './http';
export * from './webhook-signature';
export type { EventStreamFilters, EventStreamOptions, StreamedEvent } from './events-stream';
export { SseParser, type SseMessage } from './sse';
