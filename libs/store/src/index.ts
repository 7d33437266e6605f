export * from './api-keys';
export * from './audit-log';
export * from './cursor';
export * from './tenants';
export * from './templates';
export * from './sending-mailers';
export * from './domains';
export * from './mailers';
export * from './mailer-activity';
export * from './sends';
export * from './email-logs';
export * from './email-timeline';
export * from './stats';
export * from './deliverability-summary';
export { STATS_SLOTS } from './stats-rollup-sql';
export * from './suppressions';
export * from './email-events';
export * from './copies';
export * from './provider-acceptance';
export * from './webhooks';
export * from './webhook-deliveries';
export * from './backfill-jobs';
export * from './inbound';
export * from './oauth-apps';
export * from './oauth-grants';
export * from './oauth-grant-store';
export * from './feedback';
export * from './deliverability-reports';
export * from './provider-callbacks';
export * from './scheduled-sends';
export * from './retention';
export * from './reputation';
export * from './send-accept/accept-send';
export {
  SendGroupCommit,
  MAX_ROWS as SEND_GROUP_MAX_ROWS,
  type GroupedSend,
} from './send-accept/group-commit';
export { IDEMPOTENCY_TTL_SECONDS, requestHash } from './send-accept/request-hash';
export { COPIES_PER_COMMAND, type SendCopies, sendCommands, sendCopies } from './send-accept/send-commands';
export { assertMailerCanSend } from './send-accept/mailer-check';
export * from './submission-mailers';
