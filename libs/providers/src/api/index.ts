export {
  type CallFailure,
  DEFAULT_RETRY_POLICY,
  type RetryPolicy,
  callProvider,
  retryDelay,
} from './call-policy';
export { ProviderAuthError, ProviderRequestError } from './errors';
export { MAIL_FOLDER_ROLES, type MailFolderRole } from './folders';
export { parseRetryAfter } from './retry-after';
export { type ThrottleGate, kvThrottleGate, notBeforeKey } from './throttle-gate';
export type { TokenRequest, TokenSource } from './token';
