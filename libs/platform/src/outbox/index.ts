export {
  OutboxPayloadError,
  type OutboxOptions,
  type OutboxRow,
  outboxInsertSelectSql,
  outboxInsertSql,
  outboxMessage,
  outboxParams,
  writeOutbox,
  writeOutboxBatch,
} from './outbox';
export { OutboxRelay, type OutboxRelayOptions } from './relay';
export { startOutboxRelay } from './start-relay';
