import { counter, histogram } from '@mailyard/platform';

/** Dispatcher metrics on /metrics (prom-client, shared registry). */
export const eventsFlushed = counter(
  'mailyard_webhook_events_flushed_total',
  'Bus events the webhook dispatcher routed and stored (delivered or not, per the routing rules)',
);
export const deliveriesPlanned = counter(
  'mailyard_webhook_deliveries_created_total',
  'Webhook deliveries (request bodies) created by the dispatcher',
);
export const attempts = counter('mailyard_webhook_attempts_total', 'Webhook delivery attempts by outcome', [
  'result',
]);
export const attemptLatency = histogram(
  'mailyard_webhook_attempt_seconds',
  'Webhook delivery attempt duration',
  [],
  [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5],
);
