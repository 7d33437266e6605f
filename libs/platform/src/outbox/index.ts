export { enqueueOutbox } from './outbox';
export { OutboxRelay, type OutboxRelayOptions } from './relay';
