export { classifyImapError, type ImapFailure, type ImapFailureKind } from './classify-imap-error';
export {
  type ImapConnectOptions,
  type ImapConnection,
  type ImapServer,
  imapLoginDeadlineMs,
  openImapConnection,
} from './connection';
export { ImapDeadlineError, withDeadline } from './deadline';
export {
  IMAP_LOGIN_MAX_BYTES,
  IMAP_MAX_LINE_BYTES,
  IMAP_MAX_RESPONSE_TOKENS,
  type ImapParserLimits,
  imapParserLimits,
  isImapLimitError,
} from './limits';
