/**
 * @mailyard/client for browser bundles (the dashboard): everything index.ts exports except
 * verifyWebhook, which needs node:crypto's HMAC and belongs on a server anyway. Import it as
 * `@mailyard/client/browser` and bundle with the `browser` platform so random-uuid.ts resolves to
 * its browser twin.
 */
export * from './client';
export * from './admin';
export * from './errors';
export { paginate, type Page } from './paginate';
export { parseRetryAfter, type RetryOptions } from './http';
export type { EventStreamFilters, EventStreamOptions, StreamedEvent } from './events-stream';
export { SseParser, type SseMessage } from './sse';
